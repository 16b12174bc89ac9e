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
  type FollowUpDelivery,
} from '../client/agent-job';
import { agentJobFailureOf, followUpFailureOf } from '../client/agent-job';
import {
  AgentJobIdKey,
  agentJobWorkflowId,
  AgentJobStatusKey,
  quoteVisibility,
  WorkflowType,
} from '../contract/names';
import {
  AgentJobFailureType,
  FOLLOW_UP_REFUSING_STATUSES,
  FOLLOW_UP_STATUSES,
  FollowUpFailureType,
  followUpRequestSchema,
  KNOWN_JOB_STATUSES,
  STATUS_NOT_CREATED,
  type AgentJob,
  type AgentJobResult,
  type FollowUpRecord,
  type FollowUpStatus,
  type PollingOptions,
} from '../contract/agent-job';
import { getStateQuery } from '../contract/messages';
import { readCreateRecord } from '../client/agent-job-runs';
import { AgentJobResetRefusedError, resetAgentJob, serviceCallsOf } from '../client/agent-job-runs';
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
    ...followUpLines(result.followUps),
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
 * Sends a follow-up and says what the workflow did with it: queued, delivered, or received before (exit 0), or
 * not queued or of unknown outcome (exit 1, with the reason). A messageId is always sent (a new UUID when none is
 * given) so that the receipt can be found, and the same command can be repeated safely.
 */
export async function jobMessage(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobMessageSpec);
  const workflowId = workflowIdOf(flags);
  const messageId = stringFlag(flags['message-id']) ?? randomUUID();
  const request = parseOrThrow(followUpRequestSchema, { prompt: promptOf(flags), messageId }, 'follow-up');
  const client = await ctx.client();
  const json = flags.json === true;
  if (flags.wait) {
    try {
      const job = await sendFollowUpAndWait(client, workflowId, request);
      print(json, job, `delivered: job ${job.id} is ${job.status}`);
      return ExitCode.ok;
    } catch (error) {
      const failure = followUpFailureOf(error);
      if (!failure) throw error;
      // A refused duplicate was received before: its record says what became of it, as without --wait.
      const earlier =
        failure.type === FollowUpFailureType.notAccepted
          ? await getAgentJobState(client, workflowId).then(
              (state) => recordOf(state.followUps, messageId),
              () => undefined,
            )
          : undefined;
      if (earlier !== undefined && earlier.status !== 'rejected') {
        return printReceipt(json, {
          workflowId,
          messageId,
          status: earlier.status,
          earlierStatus: earlier.status,
        });
      }
      print(
        json,
        { workflowId, messageId, ...failure },
        `follow-up ${messageId}: ${failure.type}: ${failure.message}`,
      );
      return ExitCode.failed;
    }
  }
  const delivery = await followUpAnyState(client, workflowId, request, { taskQueue: ctx.taskQueue });
  const record: Pick<FollowUpRecord, 'status' | 'error'> | undefined =
    delivery.earlierStatus === undefined
      ? await receiptOf(client, delivery.workflowId, delivery.runId, messageId)
      : { status: delivery.earlierStatus };
  return printReceipt(json, {
    ...delivery,
    messageId,
    status: record?.status ?? 'pending',
    ...(record?.error ? { reason: record.error } : {}),
  });
}

function printReceipt(
  json: boolean,
  receipt: Pick<FollowUpDelivery, 'workflowId' | 'earlierStatus'> & {
    runId?: string;
    messageId: string;
    status: FollowUpStatus;
    reason?: string;
  },
): number {
  const { messageId, status, reason } = receipt;
  const where =
    receipt.runId === undefined ? receipt.workflowId : `${receipt.workflowId} (run ${receipt.runId})`;
  print(
    json,
    receipt,
    status === 'rejected'
      ? `follow-up ${messageId} not queued: ${reason ?? 'rejected'}`
      : receipt.earlierStatus !== undefined
        ? `follow-up ${messageId} was received before by ${where}: ${status}, not sent again`
        : status === 'pending'
          ? `queued for ${where} as ${messageId}`
          : `follow-up ${messageId} for ${where}: ${status}${reason ? ` (${reason})` : ''}`,
  );
  return status === 'rejected' || status === 'outcome_unknown' ? ExitCode.failed : ExitCode.ok;
}

/** The latest record of a messageId: a follow-up refused earlier may be sent again under its id. */
function recordOf(followUps: FollowUpRecord[], messageId: string): FollowUpRecord | undefined {
  return followUps.filter((record) => record.messageId === messageId).at(-1);
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
      const record = recordOf(state.followUps, messageId);
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
  const json = flags.json === true;
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const workflow = description.status.name;
  if (workflow === 'RUNNING') {
    const state = await getAgentJobState(client, workflowId);
    const lines = [
      `job ${state.jobId ?? '(creating)'}: ${state.status}`,
      `polls: ${state.polls}, next poll: ${state.nextPollAt ?? (state.pollingSince ? `polling since ${state.pollingSince}` : '-')}`,
      ...followUpLines(state.followUps),
      state.prLink ? `pull request: ${state.prLink}` : '',
      ...modelAndSource(state),
      state.queuedForBudget
        ? `queued for the project's budget${state.waitingForBudgetUntil ? ` until ${state.waitingForBudgetUntil}` : ''}`
        : '',
      state.lastError ? `last error: ${state.lastError}` : '',
    ];
    print(json, { workflow, state }, lines.filter(Boolean).join('\n'));
    return ExitCode.ok;
  }
  try {
    const result = await awaitAgentJob(client, workflowId);
    print(json, { workflow, result }, `${workflow}\n${describeResult(result)}`);
    return ExitCode.ok;
  } catch (error) {
    // A job that failed is a status to show; anything else (e.g. a payload the CLI cannot decode) is an error.
    if (!(error instanceof WorkflowFailedError)) throw error;
    const failure = agentJobFailureOf(error);
    // Cancelled or terminated runs carry no details: the job id is in AgentJobId, or (a run terminated while
    // its create was in flight) in the job's create record.
    const record = await readCreateRecord(client, workflowId);
    const jobId = description.typedSearchAttributes.get(AgentJobIdKey) ?? record?.jobId ?? null;
    // A create the service refused (4xx) made no job.
    const createSent =
      jobId === null &&
      failure?.type !== AgentJobFailureType.createRejected &&
      serviceCallsOf((await handle.fetchHistory()).events ?? []).some(
        (call) => call.type === 'createAgentJob',
      );
    const job =
      jobId === null
        ? createSent
          ? `a create of unknown outcome was sent (run ${record?.runId ?? description.runId}): a job may exist at the service; look at the project's jobs there before starting another`
          : 'no service job was created'
        : failure?.type === AgentJobFailureType.jobNotFound ||
            (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(failure?.status ?? '')
          ? `job ${jobId}: it takes no follow-ups; start a new job`
          : `job ${jobId} (the service job may still run: \`job message\` continues it)`;
    print(
      json,
      { workflow, jobId, failure },
      [
        `${workflow}: ${failure?.message ?? String(error)}`,
        job,
        ...followUpLines(failure?.followUps ?? []),
      ].join('\n'),
    );
    // The job failed, timed out or was cancelled or terminated: the README's exit code 1.
    return ExitCode.failed;
  }
}

/** How many follow-ups are in each status, and which ones may have reached the service without an answer. */
function followUpLines(followUps: FollowUpRecord[]): string[] {
  if (followUps.length === 0) return [];
  const counts = FOLLOW_UP_STATUSES.flatMap((status) => {
    const count = followUps.filter((record) => record.status === status).length;
    return count === 0 ? [] : [`${count} ${status}`];
  });
  const unknown = followUps.filter((record) => record.status === 'outcome_unknown').map((r) => r.messageId);
  return [
    `follow-ups: ${counts.join(', ')}`,
    unknown.length === 0
      ? ''
      : `outcome unknown (may have reached the service, not sent again): ${unknown.join(', ')}`,
  ].filter(Boolean);
}

/** AgentJobStatus holds the service's status as it answered (any status, also one the interface does not list). */
const STATUS_EXAMPLES = [STATUS_NOT_CREATED, ...KNOWN_JOB_STATUSES, 'paused_for_review'].join(', ');

export const jobListSpec: FlagSpec = {
  project: {
    type: 'string',
    description: 'only jobs of this project (DocsProjectId)',
    rule: projectIdSchema,
  },
  status: {
    type: 'string',
    description: `only jobs whose AgentJobStatus is this status, as the service names it, e.g. ${STATUS_EXAMPLES}`,
    rule: z
      .string()
      .regex(
        /^[a-z][a-z0-9_]{0,63}$/,
        `must be a status in lowercase letters, digits and _, e.g. ${STATUS_EXAMPLES}`,
      ),
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
    rule: z.string().regex(/^[1-9]\d*$/, 'must be a whole event id > 0'),
  },
  reason: { type: 'string', description: 'why, recorded in the history' },
};

/**
 * Resets the job's current run only to a point where nothing is sent to the service twice (see
 * client/agent-job-reset.ts); prints why and the safe points when the one asked for is not. `temporal workflow
 * reset` has no such guard: docs/agent-job.md, "Operating it".
 */
export async function jobReset(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, jobResetSpec);
  const workflowId = workflowIdOf(flags);
  const to = stringFlag(flags.to);
  const reason = stringFlag(flags.reason);
  const json = flags.json === true;
  try {
    const reset = await resetAgentJob(await ctx.client(), workflowId, {
      ...(to === undefined ? {} : { toEventId: Number(to) }),
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
