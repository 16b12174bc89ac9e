import {
  WorkflowNotFoundError,
  WorkflowUpdateStage,
  type Client,
  type WorkflowHandle,
  type WorkflowStartOptions,
  type WorkflowExecutionInfo,
  type WorkflowUpdateHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { tsToDate } from '@temporalio/common/lib/time';
import { z } from 'zod';
import {
  FOLLOW_UP_LIMITS,
  FOLLOW_UP_REFUSING_STATUSES,
  agentJobInputSchema,
  followUpRequestSchema,
  pollProgressOf,
  SentFollowUpLedger,
  type AgentJob,
  type AgentJobInput,
  type AgentJobResult,
  type AgentJobState,
  type FollowUpRecord,
  type FollowUpRequest,
  type FollowUpStatus,
  type PollingOptions,
  type SentFollowUps,
} from '../contract/agent-job';
import { FollowUpNotAcceptedError } from '../contract/errors';
import {
  followUpSignal,
  getSentFollowUpsQuery,
  getStateQuery,
  sendFollowUpUpdate,
} from '../contract/messages';
import {
  AgentJobIdKey,
  AgentJobStatusKey,
  DocsProjectIdKey,
  WorkflowType,
  agentJobWorkflowId,
  quoteVisibility,
} from '../contract/names';
import { truncate } from '../contract/text';
import { InputValidationError, parseOrThrow } from '../contract/validation';
import type { AgentJobWorkflow } from '../contract/workflow-types';
import { readCreateRecord } from './agent-job-record';
import { taskQueueFromEnv } from './connect';

export type AgentJobHandle = WorkflowHandle<AgentJobWorkflow>;

const SUMMARY_CHARS = 200;
const DETAILS_PROMPT_CHARS = 2000;

export const idempotencyKeySchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^\S+$/, 'must not contain spaces');

export interface StartAgentJobOptions {
  /** Idempotency key: one job per (projectId, key). Starting again with the same key never creates a second job. */
  key: string;
  taskQueue?: string;
}

/**
 * The start of an agentJob with id `agent-job/<projectId>/<key>`, input checked first (a bad field throws
 * InputValidationError naming it). Shared by `startAgentJob` and the Nexus operation, so both start the same way.
 */
export function agentJobStartOptions(
  input: AgentJobInput,
  options: StartAgentJobOptions,
): WorkflowStartOptions<AgentJobWorkflow> & { workflowId: string } {
  const key = parseOrThrow(idempotencyKeySchema, options.key, 'idempotency key');
  parseOrThrow(agentJobInputSchema, input, 'agentJob input');
  if (input.continuation !== undefined) {
    throw new InputValidationError(
      [{ field: 'continuation', rule: 'is set by the workflow itself' }],
      'agentJob input',
    );
  }
  return {
    workflowId: agentJobWorkflowId(input.projectId, key),
    taskQueue: options.taskQueue ?? taskQueueFromEnv(),
    args: [input],
    // A running job is joined; a closed one gets a new run, which the job's create record answers (same prompt)
    // or refuses as AgentJobKeyInUse (another prompt): one key is one job, and nothing is created twice.
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    staticSummary: summaryOf(input.jobId === undefined ? '' : `Job ${input.jobId}: `, input.prompt),
    staticDetails: detailsOf(input.projectId, input.prompt),
    typedSearchAttributes: [{ key: DocsProjectIdKey, value: input.projectId }],
  };
}

/**
 * Starts the agentJob workflow with id `agent-job/<projectId>/<key>`, or joins the run of that id still running:
 * retrying a start never creates a second job. Once that run closed, a start with the same key and prompt runs
 * again answered from the job's record (its result says `alreadyCreatedBy`); with another prompt it fails at once
 * with AgentJobKeyInUse. Input is checked first; a bad field throws InputValidationError before Temporal is
 * contacted.
 */
export async function startAgentJob(
  client: Client,
  input: AgentJobInput,
  options: StartAgentJobOptions,
): Promise<AgentJobHandle> {
  return client.workflow.start<AgentJobWorkflow>(WorkflowType.agentJob, agentJobStartOptions(input, options));
}

/**
 * The result of the workflow (following continue-as-new). A job that ended `failed`, a timeout and every other
 * workflow failure reject with WorkflowFailedError; `agentJobFailureOf` reads its type and data.
 */
export async function awaitAgentJob(client: Client, workflowId: string): Promise<AgentJobResult> {
  return client.workflow.getHandle<AgentJobWorkflow>(workflowId).result();
}

/**
 * The workflow's getState, with the running poll activity's progress from describe() (the Temporal UI shows the
 * same pending activity): the live status and reads from its last attempt, the last service error it got, and
 * its next read as nextPollAt.
 */
export async function getAgentJobState(client: Client, workflowId: string): Promise<AgentJobState> {
  const handle = client.workflow.getHandle(workflowId);
  const [state, description] = await Promise.all([handle.query(getStateQuery), handle.describe()]);
  const poll = description.raw.pendingActivities?.find((a) => a.activityType?.name === 'pollAgentJob');
  if (!poll || state.pollingSince === null) return state;
  const failure = await decodeOptionalFailureToOptionalError(
    client.options.loadedDataConverter,
    poll.lastFailure,
  );
  const progress = failure instanceof ApplicationFailure ? pollProgressOf(failure) : undefined;
  const next = poll.nextAttemptScheduleTime ? tsToDate(poll.nextAttemptScheduleTime).toISOString() : null;
  const lastError = progress?.lastError;
  return {
    ...state,
    ...(progress?.status === undefined ? {} : { status: progress.status }),
    polls: state.polls + (progress?.polls ?? 0),
    nextPollAt: next,
    ...(lastError === undefined ? {} : { lastError: `reading the job: ${lastError}` }),
  };
}

/** Queues a follow-up (signal): delivered in order, once per messageId. Returns once the workflow has it. */
export async function sendFollowUp(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
): Promise<void> {
  parseOrThrow(followUpRequestSchema, request, 'follow-up');
  try {
    await client.workflow.getHandle(workflowId).signal(followUpSignal, request);
  } catch (error) {
    throw await notAcceptedIfClosed(client, workflowId, error);
  }
}

/**
 * Sends a follow-up and waits for the service's answer (update): the job as the service returned it. Rejects
 * with WorkflowUpdateFailedError when the workflow refuses it (nothing sent) or the service does, and with
 * FollowUpNotAcceptedError when the run closed before it took the update; `followUpFailureOf` reads all three.
 */
export async function sendFollowUpAndWait(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
  options: { updateId?: string } = {},
): Promise<AgentJob> {
  parseOrThrow(followUpRequestSchema, request, 'follow-up');
  // Accepted first, then its result: only a failure before acceptance means nothing was sent. Once accepted, a
  // run that closes leaves the outcome to the error the SDK reports.
  let update: WorkflowUpdateHandle<AgentJob>;
  try {
    update = await client.workflow.getHandle(workflowId).startUpdate(sendFollowUpUpdate, {
      args: [request],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
      ...(options.updateId === undefined ? {} : { updateId: options.updateId }),
    });
  } catch (error) {
    throw await notAcceptedIfClosed(client, workflowId, error);
  }
  return update.result();
}

/**
 * A signal, or an update before its acceptance, that found the run closed (WorkflowNotFoundError: "workflow
 * execution already completed", or "update aborted by closing workflow" when the job closed as the update was
 * admitted) was not taken: nothing was sent, so it becomes FollowUpNotAcceptedError. An id no workflow has keeps its WorkflowNotFoundError.
 */
async function notAcceptedIfClosed(client: Client, workflowId: string, error: unknown): Promise<unknown> {
  if (!(error instanceof WorkflowNotFoundError)) return error;
  let status: string;
  try {
    status = (await client.workflow.getHandle(workflowId).describe()).status.name;
  } catch {
    return error;
  }
  const why =
    status === 'RUNNING'
      ? 'its run closed (continued as new) before it took the follow-up, so nothing was sent: send it again'
      : `it closed (${status}) before it took the follow-up, so nothing was sent (followUpAnyState continues a closed job)`;
  return new FollowUpNotAcceptedError(`Workflow ${workflowId}: ${why}`, workflowId, {
    cause: error,
  });
}

export interface FollowUpAnyStateOptions {
  taskQueue?: string;
  /** Polling of the new run, when one is started; by default the closed run's. */
  polling?: PollingOptions;
}

export interface FollowUpDelivery {
  workflowId: string;
  /** The run that received the follow-up (or, with `earlierStatus`, the closed run that had it). */
  runId: string;
  /** True when the workflow had closed and a new run was started for the same service job. */
  startedNewRun: boolean;
  jobId: string | undefined;
  /** A closed run of this job had already sent this messageId: nothing was sent again. Its status then. */
  earlierStatus?: FollowUpStatus;
}

/**
 * A follow-up whatever the workflow's state. Running: it is signalled. Closed (completed, timed out, cancelled,
 * terminated): a new run of the same workflow id is started by signal-with-start, attached to the same service
 * job (its id and project read from the search attributes of the latest run that followed it, skipping runs
 * refused before they had a job, or from the job's create record when the run was terminated while its create was
 * in flight), so the job continues and is polled to its end again, with the same polling. The new run starts
 * knowing every messageId the job's runs sent, so a messageId is sent at most once per job across runs; one that
 * was sent is not sent again (`earlierStatus`), one that was refused is. Concurrent callers end up in the same new
 * run. A job that is failed, archived or not found, or a run that closed before any job existed, is not accepted:
 * FollowUpNotAcceptedError says why.
 */
export async function followUpAnyState(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
  options: FollowUpAnyStateOptions = {},
): Promise<FollowUpDelivery> {
  parseOrThrow(followUpRequestSchema, request, 'follow-up');
  const handle = client.workflow.getHandle<AgentJobWorkflow>(workflowId);
  const last = await handle.describe();
  if (last.status.name === 'RUNNING') {
    try {
      await handle.signal(followUpSignal, request);
      return {
        workflowId,
        runId: last.runId,
        startedNewRun: false,
        jobId: last.typedSearchAttributes.get(AgentJobIdKey),
      };
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // It closed between describe and signal: continue the job in a new run, below.
    }
  }
  // A closed run that did not follow the job (refused: AgentJobKeyInUse, InvalidInput) knows nothing of it: the
  // latest run that did knows its project, status and follow-ups.
  const jobRun =
    last.typedSearchAttributes.get(AgentJobIdKey) === undefined
      ? ((await latestRunWithJob(client, workflowId)) ?? last)
      : last;
  const projectId = jobRun.typedSearchAttributes.get(DocsProjectIdKey);
  const jobId =
    jobRun.typedSearchAttributes.get(AgentJobIdKey) ?? (await readCreateRecord(client, workflowId))?.jobId;
  if (jobId === undefined || projectId === undefined) {
    throw new FollowUpNotAcceptedError(
      `Workflow ${workflowId} closed (${last.status.name}) before a service job was created: there is no job to follow up; start a new one`,
      workflowId,
    );
  }
  const jobStatus = jobRun.typedSearchAttributes.get(AgentJobStatusKey);
  if (jobStatus !== undefined && (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(jobStatus)) {
    throw new FollowUpNotAcceptedError(
      `Job ${jobId} is ${jobStatus}: it takes no follow-ups; start a new job`,
      workflowId,
    );
  }
  const earlier = await earlierRunsOf(client, workflowId, jobRun.runId);
  const earlierStatus =
    request.messageId === undefined ? undefined : earlier.sent.statusOf(request.messageId);
  if (earlierStatus !== undefined) {
    return { workflowId, runId: jobRun.runId, startedNewRun: false, jobId, earlierStatus };
  }
  const polling = options.polling ?? earlier.polling;
  const started = await client.workflow.signalWithStart<AgentJobWorkflow, [FollowUpRequest]>(
    WorkflowType.agentJob,
    {
      workflowId,
      taskQueue: options.taskQueue ?? last.taskQueue ?? taskQueueFromEnv(),
      args: [
        {
          projectId,
          prompt: request.prompt,
          jobId,
          ...(polling === undefined ? {} : { polling }),
          earlierFollowUps: earlier.followUps,
          sentFollowUps: earlier.sent.toJSON(),
        },
      ],
      signal: followUpSignal,
      signalArgs: [request],
      staticSummary: summaryOf(`Follow-up to job ${jobId}: `, request.prompt),
      staticDetails: detailsOf(projectId, request.prompt),
      typedSearchAttributes: [
        { key: DocsProjectIdKey, value: projectId },
        { key: AgentJobIdKey, value: jobId },
      ],
    },
  );
  return {
    workflowId,
    runId: started.signaledRunId,
    startedNewRun: started.signaledRunId !== last.runId,
    jobId,
  };
}

/**
 * What the latest earlier run of this workflow id that followed the job sent and settled, for a run started again
 * under the id (the create activity, answering from the create record); undefined when there is none.
 */
export async function earlierFollowUpsOf(
  client: Client,
  workflowId: string,
  exceptRunId: string,
): Promise<{ followUps: FollowUpRecord[]; sentFollowUps: SentFollowUps } | undefined> {
  const run = await latestRunWithJob(client, workflowId, exceptRunId);
  if (run === undefined) return undefined;
  const { sent, followUps } = await earlierRunsOf(client, workflowId, run.runId);
  return { followUps, sentFollowUps: sent.toJSON() };
}

/** The latest run of the workflow id that followed a service job (it set AgentJobId), from visibility. */
async function latestRunWithJob(
  client: Client,
  workflowId: string,
  exceptRunId?: string,
): Promise<WorkflowExecutionInfo | undefined> {
  let latest: WorkflowExecutionInfo | undefined;
  const query = `WorkflowId = ${quoteVisibility(workflowId)} AND ${AgentJobIdKey.name} IS NOT NULL`;
  for await (const run of client.workflow.list({ query })) {
    if (run.runId === exceptRunId) continue;
    if (latest === undefined || run.startTime > latest.startTime) latest = run;
  }
  return latest;
}

/**
 * What a closed run hands to a new run of its job, read by queries (a worker replays the closed run): the
 * messageIds it sent, the follow-ups it settled, its polling. One it held as pending was never sent, unless it
 * was being sent as the run ended (terminated: no workflow code ran after it): the ledger has that one as
 * outcome unknown. Without the ledger a messageId could be sent twice, so nothing is sent when it cannot be read.
 */
async function earlierRunsOf(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<{ sent: SentFollowUpLedger; followUps: FollowUpRecord[]; polling: PollingOptions | undefined }> {
  const handle = client.workflow.getHandle(workflowId, runId);
  const [state, sentFollowUps] = await Promise.all([
    handle.query(getStateQuery),
    handle.query(getSentFollowUpsQuery),
  ]).catch((error: unknown) => {
    throw new FollowUpNotAcceptedError(
      `Workflow ${workflowId}: the follow-ups its closed run sent could not be read, so one could be sent twice; ` +
        `nothing was sent (is a worker running?)`,
      workflowId,
      { cause: error },
    );
  });
  const sent = new SentFollowUpLedger(sentFollowUps);
  const followUps = state.followUps.flatMap((record): FollowUpRecord[] => {
    if (record.status !== 'pending') return [record];
    return sent.statusOf(record.messageId) === undefined
      ? []
      : [
          {
            ...record,
            status: 'outcome_unknown',
            error: 'the run closed while this follow-up was being sent',
          },
        ];
  });
  return { sent, followUps: followUps.slice(-FOLLOW_UP_LIMITS.maxRecords), polling: state.polling };
}

function summaryOf(prefix: string, prompt: string): string {
  const firstLine = prompt.trim().split('\n', 1)[0] ?? '';
  const text = prefix + firstLine;
  return truncate(text, SUMMARY_CHARS);
}

function detailsOf(projectId: string, prompt: string): string {
  return `**Project:** ${projectId}\n\n**Prompt:**\n\n${truncate(prompt, DETAILS_PROMPT_CHARS)}`;
}
