import type { Client } from '@temporalio/client';
import {
  followUpAnyState,
  sendFollowUp,
  sendFollowUpAndWait,
  startAgentJob,
} from '../../src/client/agent-job';
import { startVisitorsExport } from '../../src/client/visitors-export';
import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  pauseVisitorsSchedule,
  updateVisitorsSchedule,
} from '../../src/client/schedule';
import type { AgentJobInput } from '../../src/contract/agent-job';
import { WorkflowType, agentJobWorkflowId, visitorsExportWorkflowId } from '../../src/contract/names';
import { API_DATE_RULE } from '../../src/contract/api-dates';
import { UNENDED_RANGE_RULE } from '../../src/contract/visitors-export';
import { addDays } from '../../src/contract/zone-days';
import { MAX_PROMPT_CHARS } from '../../src/contract/validation';
import { PROMPT_TEXT_RULES } from '../../src/contract/agent-job-constants';
import type { DocsApiClient } from '../../src/docs-api/client';
import type { FaultRule } from '../../dev/simulator';

// The bad-input matrix as data: one row per case, each run as its own test by matrix.test.ts.
// docs/bad-input.md lists the same rows.

export const OVER_LIMIT_PROMPT = 'x'.repeat(MAX_PROMPT_CHARS + 1);
/** Over Temporal's 2 MB payload limit: our rule must refuse it first. */
export const THREE_MB_PROMPT = 'y'.repeat(3 * 1024 * 1024);
const LONG_MESSAGE_ID = 'm'.repeat(201);
const PROJECT_RULE = /--project: must start with a letter or digit and contain only letters, digits/;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const DATE_RULE = escaped(API_DATE_RULE);
/** Today and tomorrow in UTC: a range ending tomorrow has not ended. */
const TODAY = new Date().toISOString().slice(0, 10);
const TOMORROW = addDays(TODAY, 1);
const UNENDED = escaped(UNENDED_RANGE_RULE);
/** A prompt of only whitespace: the project's rule, not the service's. */
const BLANK_PROMPT = escaped(PROMPT_TEXT_RULES.blank);

// ---- Starter CLI (a child process): exit 2 with "Nothing was started", or exit 3 "not found" ----

export interface PromptFiles {
  /** MAX_PROMPT_CHARS + 1 characters. */
  overLimit: string;
  /** 3 MB. */
  threeMb: string;
  /** Does not exist. */
  missing: string;
}

export interface CliCase {
  name: string;
  /** The arguments, given a fresh valid project id (used unless the project is the bad input). */
  args: (project: string, files: PromptFiles) => string[];
  exit: 2 | 3;
  stderr: RegExp;
  /** The workflow id the command would have started or signalled: it must not exist afterwards. */
  workflowId?: (project: string) => string;
  /** The schedule the command would have created. */
  scheduleOf?: (project: string) => string;
}

const jobStart = (project: string, ...extra: string[]) => [
  'job',
  'start',
  '--project',
  project,
  '--key',
  'k',
  ...extra,
];
const jobMessage = (project: string, ...extra: string[]) => [
  'job',
  'message',
  '--project',
  project,
  '--key',
  'k',
  ...extra,
];
const exportRun = (project: string, ...extra: string[]) => [
  'export',
  'run',
  '--project',
  project,
  ...(extra.includes('--from') ? [] : ['--from', '2026-11-01', '--to', '2026-11-02']),
  ...extra,
];
const jobId = (project: string) => agentJobWorkflowId(project, 'k');
const exportId = (project: string) => visitorsExportWorkflowId(project, '2026-11-01', '2026-11-02');

export const cliCases: CliCase[] = [
  {
    name: "job start --prompt ''",
    args: (p) => jobStart(p, '--prompt', ''),
    exit: 2,
    stderr: /prompt: must not be empty/,
    workflowId: jobId,
  },
  {
    name: 'job start with a whitespace-only prompt',
    args: (p) => jobStart(p, '--prompt', ' \n\t '),
    exit: 2,
    stderr: new RegExp(`prompt: ${BLANK_PROMPT}`),
    workflowId: jobId,
  },
  {
    name: `job start --prompt-file of ${MAX_PROMPT_CHARS + 1} characters`,
    args: (p, f) => jobStart(p, '--prompt-file', f.overLimit),
    exit: 2,
    stderr: new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
    workflowId: jobId,
  },
  {
    name: "job start --prompt-file of 3 MB (over Temporal's payload limit)",
    args: (p, f) => jobStart(p, '--prompt-file', f.threeMb),
    exit: 2,
    stderr: new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
    workflowId: jobId,
  },
  {
    name: 'job start --prompt-file that does not exist',
    args: (p, f) => jobStart(p, '--prompt-file', f.missing),
    exit: 2,
    stderr: /--prompt-file: cannot read ".*no-such-prompt\.txt": ENOENT/,
    workflowId: jobId,
  },
  {
    name: 'job start with both --prompt and --prompt-file',
    args: (p, f) => jobStart(p, '--prompt', 'x', '--prompt-file', f.overLimit),
    exit: 2,
    stderr: /option '--prompt <text>' cannot be used with option '--prompt-file <path>'/,
    workflowId: jobId,
  },
  {
    name: 'job start without --prompt',
    args: (p) => jobStart(p),
    exit: 2,
    stderr: /--prompt \(or --prompt-file\) is required/,
    workflowId: jobId,
  },
  {
    name: "job start --project 'a/b'",
    args: () => jobStart('a/b', '--prompt', 'x'),
    exit: 2,
    stderr: PROJECT_RULE,
    workflowId: () => jobId('a/b'),
  },
  {
    name: "job start --project '..'",
    args: () => jobStart('..', '--prompt', 'x'),
    exit: 2,
    stderr: PROJECT_RULE,
    workflowId: () => jobId('..'),
  },
  {
    name: "job start --project 'a..b'",
    args: () => jobStart('a..b', '--prompt', 'x'),
    exit: 2,
    stderr: /--project: must not contain "\.\."/,
    workflowId: () => jobId('a..b'),
  },
  {
    name: "job start --project 'my project'",
    args: () => jobStart('my project', '--prompt', 'x'),
    exit: 2,
    stderr: PROJECT_RULE,
    workflowId: () => jobId('my project'),
  },
  {
    name: 'job start --initial-interval 10ms',
    args: (p) => jobStart(p, '--prompt', 'x', '--initial-interval', '10ms'),
    exit: 2,
    stderr: /--initial-interval: must be at least 100 ms/,
    workflowId: jobId,
  },
  {
    name: 'job start --deadline soon',
    args: (p) => jobStart(p, '--prompt', 'x', '--deadline', 'soon'),
    exit: 2,
    stderr: /--deadline: must be a non-negative duration/,
    workflowId: jobId,
  },
  {
    name: "job start --key 'a b'",
    args: (p) => ['job', 'start', '--project', p, '--key', 'a b', '--prompt', 'x'],
    exit: 2,
    stderr: /--key: must not contain spaces/,
    workflowId: (p) => agentJobWorkflowId(p, 'a b'),
  },
  {
    name: 'job start --colour (unknown flag)',
    args: (p) => jobStart(p, '--prompt', 'x', '--colour', 'red'),
    exit: 2,
    stderr: /unknown option '--colour'/,
    workflowId: jobId,
  },
  {
    name: "job message --prompt ''",
    args: (p) => jobMessage(p, '--prompt', ''),
    exit: 2,
    stderr: /prompt: must not be empty/,
    workflowId: jobId,
  },
  {
    name: 'job message --message-id of 201 characters',
    args: (p) => jobMessage(p, '--prompt', 'x', '--message-id', LONG_MESSAGE_ID),
    exit: 2,
    stderr: /--message-id: must be at most 200 characters/,
    workflowId: jobId,
  },
  {
    name: "job message --project 'a/b' (could name project a's workflow)",
    args: () => jobMessage('a/b', '--prompt', 'x'),
    exit: 2,
    stderr: PROJECT_RULE,
    workflowId: () => jobId('a/b'),
  },
  {
    name: 'job message to a job that does not exist',
    args: (p) => jobMessage(p, '--prompt', 'x'),
    exit: 3,
    stderr: /not found: /,
    workflowId: jobId,
  },
  {
    name: 'job status --workflow-id of a workflow that does not exist',
    args: (p) => ['job', 'status', '--workflow-id', agentJobWorkflowId(p, 'never-started')],
    exit: 3,
    stderr: /not found: .*agent-job\/.*\/never-started/,
  },
  {
    name: 'job status --project --key of a job that does not exist',
    args: (p) => ['job', 'status', '--project', p, '--key', 'k'],
    exit: 3,
    stderr: /not found: .*agent-job\/.*\/k/,
    workflowId: jobId,
  },
  {
    name: "job status --project 'a/b' --key k (could name project a's workflow)",
    args: () => ['job', 'status', '--project', 'a/b', '--key', 'k'],
    exit: 2,
    stderr: PROJECT_RULE,
  },
  {
    name: 'job list --limit 0',
    args: (p) => ['job', 'list', '--project', p, '--limit', '0'],
    exit: 2,
    stderr: /--limit: must be at least 1/,
  },
  {
    name: 'export run --page-size 0',
    args: (p) => exportRun(p, '--page-size', '0'),
    exit: 2,
    stderr: /--page-size: must be at least 1/,
    workflowId: exportId,
  },
  {
    name: 'export run --page-size 251',
    args: (p) => exportRun(p, '--page-size', '251'),
    exit: 2,
    stderr: /--page-size: must be at most 250/,
    workflowId: exportId,
  },
  {
    name: 'export run --page-size 1.5',
    args: (p) => exportRun(p, '--page-size', '1.5'),
    exit: 2,
    stderr: /--page-size: must be an integer \(got "1\.5"\)/,
    workflowId: exportId,
  },
  {
    name: 'export run --concurrency 0',
    args: (p) => exportRun(p, '--concurrency', '0'),
    exit: 2,
    stderr: /--concurrency: must be at least 1/,
    workflowId: exportId,
  },
  {
    name: 'export run --concurrency 17',
    args: (p) => exportRun(p, '--concurrency', '17'),
    exit: 2,
    stderr: /--concurrency: must be at most 16/,
    workflowId: exportId,
  },
  {
    name: 'export run --format xlsx',
    args: (p) => exportRun(p, '--format', 'xlsx'),
    exit: 2,
    stderr: /--format: must be one of csv, ndjson, json, parquet/,
    workflowId: exportId,
  },
  {
    name: 'export run --from 2026-02-30',
    args: (p) => exportRun(p, '--from', '2026-02-30', '--to', '2026-03-02'),
    exit: 2,
    stderr: new RegExp(`--from: ${DATE_RULE}`),
    workflowId: (p) => visitorsExportWorkflowId(p, '2026-02-30', '2026-03-02'),
  },
  {
    name: 'export run --from yesterday',
    args: (p) => exportRun(p, '--from', 'yesterday', '--to', '2026-11-02'),
    exit: 2,
    stderr: new RegExp(`--from: ${DATE_RULE}`),
    workflowId: (p) => visitorsExportWorkflowId(p, 'yesterday', '2026-11-02'),
  },
  {
    name: 'export run with inverted dates',
    args: (p) => exportRun(p, '--from', '2026-11-02', '--to', '2026-11-01'),
    exit: 2,
    stderr: /--to: must be after dateFrom \(dateTo is exclusive\)/,
    workflowId: (p) => visitorsExportWorkflowId(p, '2026-11-02', '2026-11-01'),
  },
  {
    name: 'export run with --from equal to --to (empty range)',
    args: (p) => exportRun(p, '--from', '2026-11-01', '--to', '2026-11-01'),
    exit: 2,
    stderr: /--to: must be after dateFrom/,
    workflowId: (p) => visitorsExportWorkflowId(p, '2026-11-01', '2026-11-01'),
  },
  {
    name: 'export run of today (a day that has not ended)',
    args: (p) => exportRun(p, '--from', TODAY, '--to', TOMORROW),
    exit: 2,
    stderr: new RegExp(`--to: ${UNENDED}`),
    workflowId: (p) => visitorsExportWorkflowId(p, TODAY, TOMORROW),
  },
  {
    name: "export run --project 'a/b'",
    args: () => exportRun('a/b'),
    exit: 2,
    stderr: PROJECT_RULE,
    workflowId: () => exportId('a/b'),
  },
  {
    name: 'schedule create --at 25:00',
    args: (p) => ['schedule', 'create', '--project', p, '--at', '25:00'],
    exit: 2,
    stderr: /--at: must be a time of day HH:MM \(24-hour\)/,
    scheduleOf: (p) => p,
  },
  {
    name: 'schedule create --tz Mars/Olympus',
    args: (p) => ['schedule', 'create', '--project', p, '--at', '02:30', '--tz', 'Mars/Olympus'],
    exit: 2,
    stderr: /--tz: must be an IANA time zone/,
    scheduleOf: (p) => p,
  },
  {
    name: 'schedule create --page-size 0',
    args: (p) => ['schedule', 'create', '--project', p, '--at', '02:30', '--page-size', '0'],
    exit: 2,
    stderr: /--page-size: must be at least 1/,
    scheduleOf: (p) => p,
  },
  {
    name: 'schedule create --catchup-window soon',
    args: (p) => ['schedule', 'create', '--project', p, '--at', '02:30', '--catchup-window', 'soon'],
    exit: 2,
    stderr: /--catchup-window: must be a non-negative duration/,
    scheduleOf: (p) => p,
  },
  {
    name: 'schedule backfill with inverted days',
    args: (p) => ['schedule', 'backfill', '--project', p, '--from', '2026-11-04', '--to', '2026-11-01'],
    exit: 2,
    stderr: /--to: must be after --from \(the end day is excluded\)/,
  },
  {
    name: 'schedule backfill --from yesterday',
    args: (p) => ['schedule', 'backfill', '--project', p, '--from', 'yesterday', '--to', '2026-11-01'],
    exit: 2,
    stderr: new RegExp(`--from: ${DATE_RULE}`),
  },
  {
    name: 'schedule describe of a project without a schedule',
    args: (p) => ['schedule', 'describe', '--project', p],
    exit: 3,
    stderr: /not found: /,
  },
];

// ---- Client module: InputValidationError naming the field, before Temporal is contacted ----

export interface ClientCase {
  name: string;
  call: (client: Client, project: string) => Promise<unknown>;
  field: string;
  rule: RegExp;
}

const job = (client: Client, input: Partial<AgentJobInput> & Record<string, unknown>, key = 'k') =>
  startAgentJob(client, { projectId: 'p', prompt: 'x', ...input }, { key });
const exportOf = (client: Client, project: string, input: Record<string, unknown>) =>
  startVisitorsExport(client, {
    projectId: project,
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    ...input,
  });
const schedule = (client: Client, project: string, options: Record<string, unknown>) =>
  createVisitorsSchedule(client, {
    projectId: project,
    at: '02:30',
    timeZone: 'UTC',
    ...options,
  });

export const clientCases: ClientCase[] = [
  {
    name: "startAgentJob prompt ''",
    call: (c, p) => job(c, { projectId: p, prompt: '' }),
    field: 'prompt',
    rule: /^must not be empty$/,
  },
  {
    name: 'startAgentJob whitespace-only prompt',
    call: (c, p) => job(c, { projectId: p, prompt: ' \n\t ' }),
    field: 'prompt',
    rule: new RegExp(`^${BLANK_PROMPT}$`),
  },
  {
    name: `startAgentJob prompt of ${MAX_PROMPT_CHARS + 1} characters`,
    call: (c, p) => job(c, { projectId: p, prompt: OVER_LIMIT_PROMPT }),
    field: 'prompt',
    rule: new RegExp(`^must be at most ${MAX_PROMPT_CHARS} characters$`),
  },
  {
    name: "startAgentJob 3 MB prompt (over Temporal's 2 MB payload limit): our rule, not Temporal's",
    call: (c, p) => job(c, { projectId: p, prompt: THREE_MB_PROMPT }),
    field: 'prompt',
    rule: new RegExp(`^must be at most ${MAX_PROMPT_CHARS} characters$`),
  },
  {
    name: "startAgentJob projectId 'a/b'",
    call: (c) => job(c, { projectId: 'a/b' }),
    field: 'projectId',
    rule: /must start with a letter or digit/,
  },
  {
    name: "startAgentJob projectId '..'",
    call: (c) => job(c, { projectId: '..' }),
    field: 'projectId',
    rule: /must start with a letter or digit/,
  },
  {
    name: "startAgentJob projectId 'my project'",
    call: (c) => job(c, { projectId: 'my project' }),
    field: 'projectId',
    rule: /must start with a letter or digit and contain only letters, digits/,
  },
  {
    name: "startAgentJob key ''",
    call: (c, p) => job(c, { projectId: p }, ''),
    field: 'idempotency key',
    rule: /^must not be empty$/,
  },
  {
    name: 'startAgentJob polling.backoffCoefficient 0.5',
    call: (c, p) => job(c, { projectId: p, polling: { backoffCoefficient: 0.5 } }),
    field: 'polling.backoffCoefficient',
    rule: /^must be at least 1$/,
  },
  {
    name: 'startAgentJob with an unknown field',
    call: (c, p) => job(c, { projectId: p, priority: 'high' }),
    field: 'agentJob input',
    rule: /Unrecognized key: "priority"/,
  },
  {
    name: 'startVisitorsExport pageSize 0',
    call: (c, p) => exportOf(c, p, { pageSize: 0 }),
    field: 'pageSize',
    rule: /^must be at least 1$/,
  },
  {
    name: 'startVisitorsExport pageSize 251',
    call: (c, p) => exportOf(c, p, { pageSize: 251 }),
    field: 'pageSize',
    rule: /^must be at most 250$/,
  },
  {
    name: 'startVisitorsExport concurrency 0',
    call: (c, p) => exportOf(c, p, { concurrency: 0 }),
    field: 'concurrency',
    rule: /^must be at least 1$/,
  },
  {
    name: 'startVisitorsExport concurrency 17',
    call: (c, p) => exportOf(c, p, { concurrency: 17 }),
    field: 'concurrency',
    rule: /^must be at most 16$/,
  },
  {
    name: "startVisitorsExport dateFrom 'yesterday'",
    call: (c, p) => exportOf(c, p, { dateFrom: 'yesterday' }),
    field: 'dateFrom',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: "startVisitorsExport dateTo '2026-02-30'",
    call: (c, p) => exportOf(c, p, { dateFrom: '2026-02-01', dateTo: '2026-02-30' }),
    field: 'dateTo',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: 'startVisitorsExport inverted dates',
    call: (c, p) => exportOf(c, p, { dateFrom: '2026-11-03', dateTo: '2026-11-01' }),
    field: 'dateTo',
    rule: /^must be after dateFrom \(dateTo is exclusive\)$/,
  },
  {
    name: 'startVisitorsExport of today (a day that has not ended)',
    call: (c, p) => exportOf(c, p, { dateFrom: TODAY, dateTo: TOMORROW }),
    field: 'dateTo',
    rule: new RegExp(`^${UNENDED} \\(set partial: true to export it so far\\)$`),
  },
  {
    name: "startVisitorsExport format 'xlsx'",
    call: (c, p) => exportOf(c, p, { format: 'xlsx' }),
    field: 'format',
    rule: /^must be one of csv, ndjson, json, parquet$/,
  },
  {
    name: 'startVisitorsExport without dateTo',
    call: (c, p) => exportOf(c, p, { dateTo: undefined }),
    field: 'dateTo',
    rule: /^is required for an export started by hand$/,
  },
  {
    name: 'startVisitorsExport with timeZone and a date-time',
    call: (c, p) => exportOf(c, p, { dateFrom: '2026-11-01T00:00:00Z', timeZone: 'Europe/Paris' }),
    field: 'dateFrom',
    rule: /^must be a day YYYY-MM-DD when timeZone is given/,
  },
  {
    name: "sendFollowUp prompt ''",
    call: (c, p) => sendFollowUp(c, agentJobWorkflowId(p, 'k'), { prompt: '' }),
    field: 'prompt',
    rule: /^must not be empty$/,
  },
  {
    name: 'sendFollowUp messageId of 201 characters',
    call: (c, p) => sendFollowUp(c, agentJobWorkflowId(p, 'k'), { prompt: 'x', messageId: LONG_MESSAGE_ID }),
    field: 'messageId',
    rule: /^must be at most 200 characters$/,
  },
  {
    name: 'sendFollowUpAndWait 3 MB prompt',
    call: (c, p) => sendFollowUpAndWait(c, agentJobWorkflowId(p, 'k'), { prompt: THREE_MB_PROMPT }),
    field: 'prompt',
    rule: new RegExp(`^must be at most ${MAX_PROMPT_CHARS} characters$`),
  },
  {
    name: 'followUpAnyState whitespace-only prompt',
    call: (c, p) => followUpAnyState(c, agentJobWorkflowId(p, 'k'), { prompt: '  ' }),
    field: 'prompt',
    rule: new RegExp(`^${BLANK_PROMPT}$`),
  },
  {
    name: "createVisitorsSchedule at '24:00'",
    call: (c, p) => schedule(c, p, { at: '24:00' }),
    field: 'at',
    rule: /^must be a time of day HH:MM \(24-hour\)$/,
  },
  {
    name: "createVisitorsSchedule timeZone 'Mars/Olympus'",
    call: (c, p) => schedule(c, p, { timeZone: 'Mars/Olympus' }),
    field: 'timeZone',
    rule: /^must be an IANA time zone/,
  },
  {
    name: 'createVisitorsSchedule pageSize 0',
    call: (c, p) => schedule(c, p, { pageSize: 0 }),
    field: 'pageSize',
    rule: /^must be at least 1$/,
  },
  {
    name: 'createVisitorsSchedule concurrency 17',
    call: (c, p) => schedule(c, p, { concurrency: 17 }),
    field: 'concurrency',
    rule: /^must be at most 16$/,
  },
  {
    name: "updateVisitorsSchedule at '7:5'",
    call: (c, p) => updateVisitorsSchedule(c, { projectId: p, at: '7:5' }),
    field: 'at',
    rule: /^must be a time of day HH:MM/,
  },
  {
    name: 'backfillVisitorsSchedule with toDay before fromDay',
    call: (c, p) => backfillVisitorsSchedule(c, p, { fromDay: '2026-11-04', toDay: '2026-11-01' }),
    field: 'toDay',
    rule: /^must not be before the first day$/,
  },
  {
    name: "pauseVisitorsSchedule projectId 'a/b'",
    call: (c) => pauseVisitorsSchedule(c, 'a/b'),
    field: 'projectId',
    rule: /must start with a letter or digit/,
  },
];

// ---- The service client: InvalidArgumentError naming the field, before any request ----

export interface DocsApiCase {
  name: string;
  call: (api: DocsApiClient, project: string) => Promise<unknown>;
  field: string;
  rule: RegExp;
}

export const docsApiCases: DocsApiCase[] = [
  {
    name: 'getVisitors offset -1 (no entry point of ours takes an offset)',
    call: (api, p) => api.getVisitors(p, { offset: -1 }),
    field: 'offset',
    rule: /^must be at least 0$/,
  },
  {
    name: 'getVisitors limit 0',
    call: (api, p) => api.getVisitors(p, { limit: 0 }),
    field: 'limit',
    rule: /^must be at least 1$/,
  },
  {
    name: 'getVisitors limit 251',
    call: (api, p) => api.getVisitors(p, { limit: 251 }),
    field: 'limit',
    rule: /^must be at most 250$/,
  },
  {
    name: "getVisitors dateFrom 'yesterday'",
    call: (api, p) => api.getVisitors(p, { dateFrom: 'yesterday', dateTo: '2026-11-02' }),
    field: 'dateFrom',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: "getVisitors dateFrom '2024-02-30' (no such day; the simulator answers 400 too)",
    call: (api, p) => api.getVisitors(p, { dateFrom: '2024-02-30', dateTo: '2024-03-02' }),
    field: 'dateFrom',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: "getVisitors dateTo '2026-11-02T00:00:00+0100' (offset without its colon)",
    call: (api, p) => api.getVisitors(p, { dateFrom: '2026-11-01', dateTo: '2026-11-02T00:00:00+0100' }),
    field: 'dateTo',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: "getVisitors dateTo '2026-11-02T00:00Z' (no seconds)",
    call: (api, p) => api.getVisitors(p, { dateFrom: '2026-11-01', dateTo: '2026-11-02T00:00Z' }),
    field: 'dateTo',
    rule: new RegExp(`^${DATE_RULE}$`),
  },
  {
    name: 'getVisitors inverted dates',
    call: (api, p) => api.getVisitors(p, { dateFrom: '2026-11-02', dateTo: '2026-11-01' }),
    field: 'dateTo',
    rule: /^must be after dateFrom/,
  },
  {
    name: "getJob job id 'a/b'",
    call: (api, p) => api.getJob(p, 'a/b'),
    field: 'jobId',
    rule: /^must not contain "\/" or spaces/,
  },
  {
    name: "getJob projectId '..'",
    call: (api) => api.getJob('..', 'job_1'),
    field: 'projectId',
    rule: /must start with a letter or digit/,
  },
  {
    name: "createJob prompt ''",
    call: (api, p) => api.createJob(p, { prompt: '' }),
    field: 'prompt',
    rule: /^must not be empty$/,
  },
  {
    name: "createJob prompt '   ' (legal at the service; refused by the project's rule)",
    call: (api, p) => api.createJob(p, { prompt: '   ' }),
    field: 'prompt',
    rule: new RegExp(`^${BLANK_PROMPT}$`),
  },
  {
    name: `sendMessage prompt of ${MAX_PROMPT_CHARS + 1} characters`,
    call: (api, p) => api.sendMessage(p, 'job_1', { prompt: OVER_LIMIT_PROMPT }),
    field: 'prompt',
    rule: new RegExp(`^must be at most ${MAX_PROMPT_CHARS} characters$`),
  },
];

// ---- Workflow inputs given straight to Temporal, bypassing the client: the workflow checks them too ----

export interface RawStartCase {
  name: string;
  type: (typeof WorkflowType)[keyof typeof WorkflowType];
  /** The workflow's arguments. */
  args: (project: string) => unknown[];
  message: RegExp;
}

const agentJobArgs = (input: Record<string, unknown>) => (p: string) => [
  { projectId: p, prompt: 'x', ...input },
];
const exportArgs = (input: Record<string, unknown>) => (p: string) => [
  { projectId: p, dateFrom: '2026-11-01', dateTo: '2026-11-02', ...input },
];

export const rawStartCases: RawStartCase[] = [
  {
    name: "agentJob projectId '../x'",
    type: WorkflowType.agentJob,
    args: agentJobArgs({ projectId: '../x' }),
    message: /projectId: must start with a letter or digit/,
  },
  {
    name: 'agentJob without a prompt',
    type: WorkflowType.agentJob,
    args: (p) => [{ projectId: p }],
    message: /prompt: is required and must be a string/,
  },
  {
    name: 'agentJob whitespace-only prompt',
    type: WorkflowType.agentJob,
    args: agentJobArgs({ prompt: '   ' }),
    message: new RegExp(`prompt: ${BLANK_PROMPT}`),
  },
  {
    name: `agentJob prompt of ${MAX_PROMPT_CHARS + 1} characters`,
    type: WorkflowType.agentJob,
    args: agentJobArgs({ prompt: OVER_LIMIT_PROMPT }),
    message: new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
  },
  {
    name: "agentJob polling.initialInterval '10ms'",
    type: WorkflowType.agentJob,
    args: agentJobArgs({ polling: { initialInterval: '10ms' } }),
    message: /polling\.initialInterval: must be at least 100 ms/,
  },
  {
    name: 'agentJob with an unknown field',
    type: WorkflowType.agentJob,
    args: agentJobArgs({ priority: 'high' }),
    message: /Unrecognized key: "priority"/,
  },
  {
    name: 'agentJob with no input at all',
    type: WorkflowType.agentJob,
    args: () => [],
    message: /agentJob input: Invalid input: expected object, received undefined/,
  },
  {
    name: 'visitorsExport pageSize 0',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ pageSize: 0 }),
    message: /pageSize: must be at least 1/,
  },
  {
    name: 'visitorsExport pageSize 251',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ pageSize: 251 }),
    message: /pageSize: must be at most 250/,
  },
  {
    name: 'visitorsExport concurrency 0',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ concurrency: 0 }),
    message: /concurrency: must be at least 1/,
  },
  {
    name: 'visitorsExport concurrency 17',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ concurrency: 17 }),
    message: /concurrency: must be at most 16/,
  },
  {
    name: "visitorsExport format 'xlsx'",
    type: WorkflowType.visitorsExport,
    args: exportArgs({ format: 'xlsx' }),
    message: /format: must be one of csv, ndjson, json/,
  },
  {
    name: "visitorsExport dateFrom '2026-02-30'",
    type: WorkflowType.visitorsExport,
    args: exportArgs({ dateFrom: '2026-02-30', dateTo: '2026-03-02' }),
    message: new RegExp(`dateFrom: ${DATE_RULE}`),
  },
  {
    name: 'visitorsExport inverted dates',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ dateFrom: '2026-11-03', dateTo: '2026-11-02' }),
    message: /dateTo: must be after dateFrom/,
  },
  {
    name: 'visitorsExport dateFrom without dateTo',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ dateTo: undefined }),
    message: /dateTo: is required/,
  },
  {
    name: 'visitorsExport without dates (a nightly run is visitorsNightly)',
    type: WorkflowType.visitorsExport,
    args: (p) => [{ projectId: p }],
    message: /dateFrom: is required; dateTo: is required/,
  },
  {
    name: 'visitorsExport of today (a day that has not ended)',
    type: WorkflowType.visitorsExport,
    args: exportArgs({ dateFrom: TODAY, dateTo: TOMORROW }),
    message: new RegExp(`dateTo: ${UNENDED}`),
  },
  {
    name: "visitorsNightly timeZone 'Mars/Olympus'",
    type: WorkflowType.visitorsNightly,
    args: (p) => [{ projectId: p, timeZone: 'Mars/Olympus' }],
    message: /timeZone: must be an IANA time zone/,
  },
  {
    name: 'visitorsNightly with dates (it exports the days due)',
    type: WorkflowType.visitorsNightly,
    args: (p) => [{ projectId: p, dateFrom: '2026-11-01', dateTo: '2026-11-02' }],
    message: /Unrecognized keys: "dateFrom", "dateTo"/,
  },
  {
    name: "visitorsExport projectId 'a b'",
    type: WorkflowType.visitorsExport,
    args: exportArgs({ projectId: 'a b' }),
    message: /projectId: must start with a letter or digit/,
  },
];

// ---- Update `sendFollowUp` sent raw to a running job: refused by the validator, nothing sent ----

export interface UpdateCase {
  name: string;
  arg: unknown;
  type: 'InvalidInput' | 'FollowUpNotAccepted';
  message: RegExp;
  /** A signal sent just before the update (for the duplicate case). */
  signalFirst?: { prompt: string; messageId: string };
}

export const updateCases: UpdateCase[] = [
  {
    name: "prompt ' '",
    arg: { prompt: ' ' },
    type: 'InvalidInput',
    message: new RegExp(`prompt: ${BLANK_PROMPT}`),
  },
  { name: "prompt ''", arg: { prompt: '' }, type: 'InvalidInput', message: /prompt: must not be empty/ },
  {
    name: 'messageId of 201 characters',
    arg: { prompt: 'x', messageId: LONG_MESSAGE_ID },
    type: 'InvalidInput',
    message: /messageId: must be at most 200 characters/,
  },
  {
    name: `prompt of ${MAX_PROMPT_CHARS + 1} characters`,
    arg: { prompt: OVER_LIMIT_PROMPT },
    type: 'InvalidInput',
    message: new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
  },
  {
    name: 'argument 42 (not an object)',
    arg: 42,
    type: 'InvalidInput',
    message: /follow-up: Invalid input: expected object, received number/,
  },
  {
    name: 'an unknown field',
    arg: { prompt: 'x', urgent: true },
    type: 'InvalidInput',
    message: /Unrecognized key: "urgent"/,
  },
  {
    name: 'a messageId already received',
    arg: { prompt: 'Again', messageId: 'dup' },
    type: 'FollowUpNotAccepted',
    message: /follow-up dup was already received \(status: (pending|delivered)\)/,
    signalFirst: { prompt: 'First', messageId: 'dup' },
  },
];

// ---- Signal `followUp` sent raw: a signal cannot be refused to its sender, so it is recorded as rejected ----

export interface SignalCase {
  name: string;
  arg: unknown;
  /** The rule recorded on the rejected follow-up; undefined for a duplicate, which is ignored. */
  error: RegExp | undefined;
  /** The messageId the rejected record carries (default ids are followup-<n>). */
  messageId: string;
}

export const signalCases: SignalCase[] = [
  {
    name: "prompt ''",
    arg: { prompt: '', messageId: 'bad' },
    error: /prompt: must not be empty/,
    messageId: 'bad',
  },
  {
    name: 'argument 42 (not an object)',
    arg: 42,
    error: /follow-up: Invalid input: expected object/,
    messageId: 'followup-1',
  },
  {
    name: 'messageId of 201 characters',
    arg: { prompt: 'x', messageId: LONG_MESSAGE_ID },
    error: /messageId: must be at most 200 characters/,
    messageId: 'followup-1',
  },
  {
    name: `prompt of ${MAX_PROMPT_CHARS + 1} characters`,
    arg: { prompt: OVER_LIMIT_PROMPT, messageId: 'bad' },
    error: new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
    messageId: 'bad',
  },
  {
    name: 'a messageId already received (second prompt differs)',
    arg: { prompt: 'Another text', messageId: 'good' },
    error: undefined,
    messageId: 'good',
  },
];

// ---- The service's answers: a fault once, then normal answers ----

export type FaultShape = Pick<FaultRule, 'route' | 'kind' | 'malformed' | 'drift' | 'status'>;

export interface GetJobAnswerCase {
  name: string;
  fault: FaultShape;
  /** The failure of the retried get-job attempt (of the run, when rejected); undefined when the answer is tolerated. */
  failure: RegExp | undefined;
  /** rejected: a refusal (403, 3xx), never retried: the run fails with AgentJobPollRejected. Default: the job completes. */
  outcome?: 'rejected';
}

type AgentRoute = 'createJob' | 'getJob' | 'sendMessage';
/** Where a route's redirect points: the same path, over https. */
const REDIRECTED_PATH: Record<AgentRoute, string> = {
  createJob: '\\/job',
  getJob: '\\/job\\/.*',
  sendMessage: '\\/message',
};

/**
 * The refusals any agent call can meet, in the service's shapes: a 403 (the explanation, then the service's own
 * message) and a redirect (an http:// base URL). Neither is processed, and the same request is refused again.
 * `row` makes the rest of a case from the message expected.
 */
function refusalsOf<R extends object>(
  route: AgentRoute,
  row: (message: RegExp) => R,
): ({ name: string; fault: FaultShape } & R)[] {
  const forbidden = new RegExp(
    `${route}: forbidden: the key is not allowed this operation \\(a read-only key, or one restricted to ` +
      'other IP addresses\\): injected HTTP 403',
  );
  const redirected = new RegExp(
    `${route}: redirected to https:\\/\\/.*${REDIRECTED_PATH[route]}, not followed and not processed: ` +
      'set DOCS_API_BASE_URL',
  );
  return [
    {
      name: 'HTTP 403 (a read-only or IP-restricted key)',
      fault: { route, kind: 'status', status: 403 },
      ...row(forbidden),
    },
    {
      name: 'HTTP 301 to https (an http:// DOCS_API_BASE_URL)',
      fault: { route, kind: 'redirect' },
      ...row(redirected),
    },
  ];
}

export const getJobAnswerCases: GetJobAnswerCase[] = [
  {
    name: 'truncated JSON',
    fault: { route: 'getJob', kind: 'malformed', malformed: 'truncated-json' },
    failure: /getJob: response body is not valid JSON \| HTTP 200/,
  },
  {
    name: 'a body that is not JSON',
    fault: { route: 'getJob', kind: 'malformed', malformed: 'not-json' },
    failure: /getJob: response body is not valid JSON .*body: upstream answered: OK \(not JSON\)/,
  },
  {
    name: 'a JSON job without a content type (read as JSON)',
    fault: { route: 'getJob', kind: 'malformed', malformed: 'no-content-type' },
    failure: undefined,
  },
  {
    name: '200 with an HTML body',
    fault: { route: 'getJob', kind: 'malformed', malformed: 'html-200' },
    failure: /getJob: expected a JSON response, got content-type "text\/html.*body: <!DOCTYPE html>/,
  },
  {
    name: 'a job without its id (missing field)',
    fault: { route: 'getJob', kind: 'drift', drift: 'missing-id' },
    failure: /getJob: response field id: .*expected string, received undefined/,
  },
  {
    name: 'wrong types (status 42)',
    fault: { route: 'getJob', kind: 'drift', drift: 'wrong-types' },
    failure: /getJob: response field status: .*expected string, received number/,
  },
  {
    name: "an unknown status ('paused_for_review')",
    fault: { route: 'getJob', kind: 'drift', drift: 'unknown-status' },
    failure: undefined,
  },
  {
    name: 'extra fields',
    fault: { route: 'getJob', kind: 'drift', drift: 'extra-fields' },
    failure: undefined,
  },
  {
    name: 'model an object, createdAt a number, source a string (fields the worker does not need)',
    fault: { route: 'getJob', kind: 'drift', drift: 'odd-optional-types' },
    failure: undefined,
  },
  {
    name: 'source.ref null',
    fault: { route: 'getJob', kind: 'drift', drift: 'null-ref' },
    failure: undefined,
  },
  ...refusalsOf('getJob', (failure) => ({ failure, outcome: 'rejected' as const })),
];

export interface CreateAnswerCase {
  name: string;
  fault: FaultShape;
  /** outcome-unknown: the job may exist, never re-sent; rejected: the service did not act; completes: the job goes on. */
  outcome: 'outcome-unknown' | 'rejected' | 'completes';
  /** The failure's message (outcome-unknown, rejected). */
  failure?: RegExp;
}

export const createAnswerCases: CreateAnswerCase[] = [
  {
    name: '200 with an HTML body',
    fault: { route: 'createJob', kind: 'malformed', malformed: 'html-200' },
    outcome: 'outcome-unknown',
    failure: /createJob: expected a JSON response, got content-type "text\/html/,
  },
  {
    name: 'a JSON job without a content type (read as JSON, the job kept)',
    fault: { route: 'createJob', kind: 'malformed', malformed: 'no-content-type' },
    outcome: 'completes',
  },
  {
    name: 'truncated JSON',
    fault: { route: 'createJob', kind: 'malformed', malformed: 'truncated-json' },
    outcome: 'outcome-unknown',
    failure: /createJob: response body is not valid JSON/,
  },
  {
    name: 'a job without its id',
    fault: { route: 'createJob', kind: 'drift', drift: 'missing-id' },
    outcome: 'outcome-unknown',
    failure: /createJob: response field id/,
  },
  {
    name: 'model an object, createdAt a number, source a string',
    fault: { route: 'createJob', kind: 'drift', drift: 'odd-optional-types' },
    outcome: 'completes',
  },
  {
    name: 'status 42 beside the job id',
    fault: { route: 'createJob', kind: 'drift', drift: 'wrong-types' },
    outcome: 'completes',
  },
  ...refusalsOf('createJob', (failure) => ({ outcome: 'rejected' as const, failure })),
];

export interface MessageAnswerCase {
  name: string;
  fault: FaultShape;
  /** How the follow-up is recorded: outcome_unknown (the service may have acted), or rejected (it did not). */
  status: 'outcome_unknown' | 'rejected';
  /** The error recorded with the follow-up. */
  error: RegExp;
}

export const messageAnswerCases: MessageAnswerCase[] = [
  {
    name: 'a body that is not JSON',
    fault: { route: 'sendMessage', kind: 'malformed', malformed: 'not-json' },
    status: 'outcome_unknown',
    error: /sendMessage: response body is not valid JSON/,
  },
  ...refusalsOf('sendMessage', (error) => ({ status: 'rejected' as const, error })),
];

export interface VisitorsAnswerCase {
  name: string;
  fault: FaultShape;
  /** The failure of the retried page; undefined when the answer is tolerated. */
  failure: RegExp | undefined;
}

export const visitorsAnswerCases: VisitorsAnswerCase[] = [
  {
    name: '200 with an HTML body',
    fault: { route: 'getVisitors', kind: 'malformed', malformed: 'html-200' },
    failure: /getVisitors: expected a JSON response, got content-type "text\/html/,
  },
  {
    name: 'rows without their path (missing field)',
    fault: { route: 'getVisitors', kind: 'drift', drift: 'missing-id' },
    failure: /getVisitors: response field visitors\.0\.path/,
  },
  {
    name: 'hasMore as a string (wrong type)',
    fault: { route: 'getVisitors', kind: 'drift', drift: 'wrong-types' },
    failure: /getVisitors: response field hasMore/,
  },
  {
    name: 'extra fields of any type (on the page, its totals and rows)',
    fault: { route: 'getVisitors', kind: 'drift', drift: 'odd-optional-types' },
    failure: undefined,
  },
];
