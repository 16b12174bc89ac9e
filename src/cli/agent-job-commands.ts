import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import {
  agentJobStartOptions,
  awaitAgentJob,
  followUpAnyState,
  getAgentJobState,
  idempotencyKeySchema,
  sendFollowUpAndWait,
  startAgentJob,
} from '../client/agent-job';
import { agentJobFailureOf } from '../client/agent-job-failures';
import {
  AgentJobIdKey,
  agentJobWorkflowId,
  AgentJobStatusKey,
  quoteVisibility,
  WorkflowType,
} from '../contract/names';
import {
  followUpRequestSchema,
  type AgentJob,
  type AgentJobResult,
  type FollowUpRecord,
  type PollingOptions,
} from '../contract/agent-job';
import { KNOWN_JOB_STATUSES, STATUS_NOT_CREATED } from '../contract/agent-job-constants';
import { getStateQuery } from '../contract/messages';
import { readCreateRecord } from '../client/agent-job-record';
import { AgentJobResetRefusedError, resetAgentJob } from '../client/agent-job-reset';
import { durationSchema, parseOrThrow, projectIdSchema, promptSchema } from '../contract/validation';
import { z } from 'zod';
import { PROJECT_FLAG, parseFlags, stringFlag, type Flags, type FlagSpec } from './flags';
import { LIMIT_FLAG, limitFlag, listWorkflows } from './list';
import type { CommandContext } from './command-context';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';

const target: FlagSpec = {
  'workflow-id': { type: 'string', description: 'workflow id (agent-job/<projectId>/<key>)' },
  project: {
    type: 'string',
    description: 'project id (with --key, instead of --workflow-id)',
    rule: projectIdSchema,
  },
  key: {
    type: 'string',
    description: 'idempotency key the job was started with',
    rule: idempotencyKeySchema,
  },
};

function workflowIdOf(flags: Flags): string {
  const id = stringFlag(flags['workflow-id']);
  if (id) return id;
  const project = stringFlag(flags.project);
  const key = stringFlag(flags.key);
  // A bad project id could name another project's workflow (agent-job/a/b/k is project "a", key "b/k").
  if (project && key) return agentJobWorkflowId(parseOrThrow(projectIdSchema, project, 'projectId'), key);
  throw new UsageError('--workflow-id, or --project with --key, is required');
}

function promptOf(flags: Flags): string {
  const file = stringFlag(flags['prompt-file']);
  if (file) {
    try {
      return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw new UsageError(`--prompt-file: cannot read "${file}": ${(error as Error).message}`);
    }
  }
  const prompt = stringFlag(flags.prompt);
  if (prompt === undefined)
    throw new UsageError('--prompt (or --prompt-file) is required: the instruction for the agent');
  return prompt;
}

export const jobStartSpec: FlagSpec = {
  project: PROJECT_FLAG,
  prompt: { type: 'string', description: 'the instruction for the agent', rule: promptSchema },
  'prompt-file': { type: 'string', description: 'read the prompt from a file ("-" for stdin)' },
  key: {
    type: 'string',
    description: 'idempotency key: one job per project and key (default: a new UUID)',
    rule: idempotencyKeySchema,
  },
  'initial-interval': {
    type: 'string',
    description: 'first poll interval, e.g. 5s',
    rule: durationSchema,
    field: 'polling.initialInterval',
  },
  'max-interval': {
    type: 'string',
    description: 'longest poll interval, e.g. 2m',
    rule: durationSchema,
    field: 'polling.maxInterval',
  },
  deadline: {
    type: 'string',
    description: 'give up after this long, e.g. 24h',
    rule: durationSchema,
    field: 'polling.deadline',
  },
  wait: { type: 'boolean', description: 'show the live status until the job ends, then print the PR link' },
};

export async function jobStart(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobStartSpec);
  const polling: PollingOptions = {};
  for (const [flag, field] of [
    ['initial-interval', 'initialInterval'],
    ['max-interval', 'maxInterval'],
    ['deadline', 'deadline'],
  ] as const) {
    const value = stringFlag(flags[flag]);
    if (value !== undefined) polling[field] = value;
  }
  const input = {
    projectId: stringFlag(flags.project) ?? '',
    prompt: promptOf(flags),
    ...(Object.keys(polling).length > 0 ? { polling } : {}),
  };
  const key = stringFlag(flags.key) ?? randomUUID();
  // The rules across fields (the polling intervals' order, say) are checked before connecting too.
  agentJobStartOptions(input, { key, taskQueue: ctx.taskQueue });
  const client = await ctx.client();
  const handle = await startAgentJob(client, input, { key, taskQueue: ctx.taskQueue });
  const json = flags.json === true;
  if (!flags.wait) {
    print(json, { workflowId: handle.workflowId }, `workflow id: ${handle.workflowId}`);
    return ExitCode.ok;
  }
  if (!json) process.stdout.write(`workflow id: ${handle.workflowId}\n`);
  return waitForJob(client, handle.workflowId, json);
}

async function waitForJob(client: Client, workflowId: string, json: boolean): Promise<number> {
  let last = '';
  // The live status is for a reader: under --json nothing prints it, so the workflow is not queried for it.
  const timer = json
    ? undefined
    : setInterval(() => {
        getAgentJobState(client, workflowId).then(
          (state) => {
            const line = [
              `job ${state.jobId ?? '(creating)'}: ${state.status}, ${state.polls} polls, ${state.pendingFollowUps} pending follow-ups`,
              ...modelAndSource(state),
            ].join('; ');
            if (line !== last) process.stdout.write(`${line}\n`);
            last = line;
          },
          () => undefined,
        );
      }, 1000);
  try {
    const result = await awaitAgentJob(client, workflowId);
    print(json, result, describeResult(result));
    return ExitCode.ok;
  } catch (error) {
    const failure = agentJobFailureOf(error);
    if (!failure) throw error;
    print(json, failure, `job ended: ${failure.type}: ${failure.message}`);
    return ExitCode.failed;
  } finally {
    clearInterval(timer);
  }
}

function describeResult(result: AgentJobResult): string {
  const earlier = result.alreadyCreatedBy;
  return [
    earlier === undefined
      ? ''
      : `already created by run ${earlier.runId} (${earlier.recordedAt}) with this prompt: not created again`,
    `job ${result.jobId}: ${result.status} after ${result.polls} polls`,
    result.prLink ? `pull request: ${result.prLink}` : 'no pull request (no files changed)',
    ...modelAndSource(result),
  ]
    .filter(Boolean)
    .join('\n');
}

/** `model: …` and `source: <repository>, branch <ref>`, each when the service gave it (result, getState). */
function modelAndSource({ model, source }: Pick<AgentJob, 'model' | 'source'>): string[] {
  return [
    model === undefined ? '' : `model: ${model}`,
    source === undefined
      ? ''
      : `source: ${source.repository ?? '(repository not given)'}, branch ${source.ref ?? '(none given)'}`,
  ].filter(Boolean);
}

export const jobMessageSpec: FlagSpec = {
  ...target,
  prompt: { type: 'string', description: 'the follow-up instruction', rule: promptSchema },
  'prompt-file': { type: 'string', description: 'read the follow-up from a file ("-" for stdin)' },
  'message-id': {
    type: 'string',
    description: 'deduplication id: delivered at most once per id and job (default: a new UUID, printed)',
    rule: followUpRequestSchema.shape.messageId,
  },
  wait: { type: 'boolean', description: "send as an update and print the service's answer" },
};

/** How long `job message` waits for the workflow to show the follow-up in its state. */
const RECEIPT_WAIT_MS = 10_000;

/**
 * Sends a follow-up and says what the workflow did with it: queued or already delivered (exit 0), or not queued
 * (rejected: queue full, job failed or archived, invalid; exit 1, with the reason). A messageId is always sent
 * (a new UUID when none is given) so that the receipt can be found, and the same command can be repeated safely.
 */
export async function jobMessage(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobMessageSpec);
  const workflowId = workflowIdOf(flags);
  const messageId = stringFlag(flags['message-id']) ?? randomUUID();
  const request = parseOrThrow(followUpRequestSchema, { prompt: promptOf(flags), messageId }, 'follow-up');
  const client = await ctx.client();
  const json = flags.json === true;
  if (flags.wait) {
    const job = await sendFollowUpAndWait(client, workflowId, request);
    print(json, job, `delivered: job ${job.id} is ${job.status}`);
    return ExitCode.ok;
  }
  const delivery = await followUpAnyState(client, workflowId, request, { taskQueue: ctx.taskQueue });
  const record =
    delivery.earlierStatus === undefined
      ? await receiptOf(client, delivery.workflowId, delivery.runId, messageId)
      : { messageId, prompt: '', status: delivery.earlierStatus };
  const status = record?.status ?? 'pending';
  const receipt = { ...delivery, messageId, status, ...(record?.error ? { reason: record.error } : {}) };
  if (status === 'rejected') {
    print(json, receipt, `follow-up ${messageId} not queued: ${record?.error ?? 'rejected'}`);
    return ExitCode.failed;
  }
  const where = `${delivery.workflowId} (run ${delivery.runId})`;
  print(
    json,
    receipt,
    delivery.earlierStatus !== undefined
      ? `follow-up ${messageId} was received before by ${where}: ${status}, not sent again`
      : status === 'pending'
        ? `queued for ${where} as ${messageId}`
        : `follow-up ${messageId} for ${where}: ${status}`,
  );
  return status === 'outcome_unknown' ? ExitCode.failed : ExitCode.ok;
}

/** The run's record of the follow-up, once the workflow has seen the signal (undefined if not in time). */
async function receiptOf(
  client: Client,
  workflowId: string,
  runId: string,
  messageId: string,
): Promise<FollowUpRecord | undefined> {
  const until = Date.now() + RECEIPT_WAIT_MS;
  for (;;) {
    try {
      const state = await client.workflow.getHandle(workflowId, runId).query(getStateQuery);
      const record = state.followUps.find((r) => r.messageId === messageId);
      if (record) return record;
    } catch {
      // Not queryable yet (a new run's first task), or it continued as new: the signal went with it.
    }
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export const jobStatusSpec: FlagSpec = { ...target };

export async function jobStatus(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobStatusSpec);
  const workflowId = workflowIdOf(flags);
  const client = await ctx.client();
  const description = await client.workflow.getHandle(workflowId).describe();
  if (description.status.name !== 'RUNNING') {
    const json = flags.json === true;
    try {
      const result = await awaitAgentJob(client, workflowId);
      print(
        json,
        { workflow: description.status.name, result },
        `${description.status.name}\n${describeResult(result)}`,
      );
    } catch (error) {
      // A job that failed is a status to show; anything else (e.g. a payload the CLI cannot decode) is an error.
      if (!(error instanceof WorkflowFailedError)) throw error;
      const failure = agentJobFailureOf(error);
      // Cancelled or terminated runs carry no details: the job id is in AgentJobId, or (a run terminated while
      // its create was in flight) in the job's create record.
      const record = await readCreateRecord(client, workflowId);
      const jobId = description.typedSearchAttributes.get(AgentJobIdKey) ?? record?.jobId ?? null;
      print(
        json,
        { workflow: description.status.name, jobId, failure },
        [
          `${description.status.name}: ${failure?.message ?? String(error)}`,
          jobId !== null
            ? `job ${jobId} (the service job may still run: \`job message\` continues it)`
            : record !== undefined
              ? `a create of unknown outcome was sent (run ${record.runId}): a job may exist at the service`
              : 'no service job was created',
        ].join('\n'),
      );
      // The job failed, timed out or was cancelled or terminated: the README's exit code 1.
      return ExitCode.failed;
    }
    return ExitCode.ok;
  }
  const state = await getAgentJobState(client, workflowId);
  print(
    flags.json === true,
    { workflow: 'RUNNING', state },
    [
      `job ${state.jobId ?? '(creating)'}: ${state.status}`,
      `polls: ${state.polls}, next poll: ${state.nextPollAt ?? (state.pollingSince ? `polling since ${state.pollingSince}` : '-')}`,
      `follow-ups: ${state.followUps.length} (${state.pendingFollowUps} pending)`,
      state.prLink ? `pull request: ${state.prLink}` : '',
      ...modelAndSource(state),
      state.queuedForBudget
        ? `queued for the project's budget${state.waitingForBudgetUntil ? ` until ${state.waitingForBudgetUntil}` : ''}`
        : '',
      state.lastError ? `last error: ${state.lastError}` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
  return ExitCode.ok;
}

/** What AgentJobStatus holds: a status of the service, or `creating` before it answered. */
const JOB_LIST_STATUSES = [STATUS_NOT_CREATED, ...KNOWN_JOB_STATUSES] as const;

export const jobListSpec: FlagSpec = {
  project: {
    type: 'string',
    description: 'only jobs of this project (DocsProjectId)',
    rule: projectIdSchema,
  },
  status: {
    type: 'string',
    description: `only jobs whose AgentJobStatus is this: ${JOB_LIST_STATUSES.join(', ')}`,
    rule: z.enum(JOB_LIST_STATUSES, { error: `must be one of ${JOB_LIST_STATUSES.join(', ')}` }),
  },
  limit: LIMIT_FLAG,
};

export async function jobList(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobListSpec);
  const limit = limitFlag(flags.limit);
  const status = stringFlag(flags.status);
  const rows = await listWorkflows(
    await ctx.client(),
    {
      workflowType: WorkflowType.agentJob,
      projectId: stringFlag(flags.project),
      clauses: status ? [`${AgentJobStatusKey.name} = ${quoteVisibility(status)}`] : [],
      limit,
    },
    (execution) => {
      const jobStatus = execution.typedSearchAttributes.get(AgentJobStatusKey);
      return jobStatus ? { jobStatus } : {};
    },
  );
  print(
    flags.json === true,
    rows,
    rows.length === 0
      ? 'no jobs'
      : rows
          .map((r) => `${r.workflowId}  ${r.workflowStatus}  ${r.jobStatus ?? '-'}  ${r.started}`)
          .join('\n'),
  );
  return ExitCode.ok;
}

export const jobCancelSpec: FlagSpec = { ...target };

/**
 * Cancels the job's workflow: polling stops at once and the workflow ends CANCELLED. The service job itself may
 * go on (the service has no cancel operation); a follow-up can still continue it later.
 */
export async function jobCancel(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobCancelSpec);
  const workflowId = workflowIdOf(flags);
  const handle = (await ctx.client()).workflow.getHandle(workflowId);
  const description = await handle.describe();
  const json = flags.json === true;
  if (description.status.name !== 'RUNNING') {
    print(
      json,
      { workflowId, cancelled: false, workflow: description.status.name },
      `${workflowId} is already closed (${description.status.name}): nothing to cancel`,
    );
    return ExitCode.failed;
  }
  await handle.cancel();
  print(
    json,
    { workflowId, cancelled: true },
    `cancellation requested for ${workflowId}: polling stops and the workflow ends CANCELLED (the service job itself is not cancelled: the service has no such operation)`,
  );
  return ExitCode.ok;
}

export const jobResetSpec: FlagSpec = {
  ...target,
  to: {
    type: 'string',
    description:
      'WorkflowTaskCompleted event id to reset to (default: the latest safe one); unsafe ids are refused',
  },
  reason: { type: 'string', description: 'why, recorded in the history' },
};

/**
 * Resets the job's current run only to a point where nothing is sent to the service twice (see
 * client/agent-job-reset.ts); prints the safe points when the one asked for is not. `temporal workflow reset`
 * has no such guard: docs/agent-job.md, "Operating it".
 */
export async function jobReset(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobResetSpec);
  const workflowId = workflowIdOf(flags);
  const to = stringFlag(flags.to);
  const toEventId = to === undefined ? undefined : Number(to);
  if (toEventId !== undefined && !(Number.isInteger(toEventId) && toEventId > 0)) {
    throw new UsageError(`--to: must be a whole event id > 0, got "${to}"`);
  }
  const reason = stringFlag(flags.reason);
  const json = flags.json === true;
  try {
    const reset = await resetAgentJob(await ctx.client(), workflowId, {
      ...(toEventId === undefined ? {} : { toEventId }),
      ...(reason === undefined ? {} : { reason }),
    });
    print(
      json,
      { workflowId, ...reset },
      `reset ${workflowId} to event ${reset.toEventId}: run ${reset.runId} -> ${reset.resetRunId}`,
    );
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof AgentJobResetRefusedError)) throw error;
    print(json, { workflowId, refused: error.message, ...error.points }, `reset refused: ${error.message}`);
    return ExitCode.failed;
  }
}
