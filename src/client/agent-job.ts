import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type Client,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { tsToDate } from '@temporalio/common/lib/time';
import { z } from 'zod';
import {
  AgentJobIdKey,
  DocsProjectIdKey,
  FollowUpNotAcceptedError,
  InputValidationError,
  WorkflowType,
  agentJobInputSchema,
  agentJobWorkflowId,
  followUpRequestSchema,
  followUpSignal,
  getStateQuery,
  parseOrThrow,
  pollProgressOf,
  sendFollowUpUpdate,
  type AgentJobInput,
  type AgentJobState,
  type AgentJobWorkflow,
  type FollowUpRequest,
  type PollingOptions,
} from '../contract';
import { truncate, type InputIssue } from '../contract/failure-types';
import { closedJobOf, earlierRunOf, earlierRunsOf } from './agent-job-runs';
import { taskQueueFromEnv } from './connect';

export type AgentJobHandle = WorkflowHandle<AgentJobWorkflow>;

export const idempotencyKeySchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^\S+$/, 'must not contain spaces');

/** `key`: the idempotency key, one job per (projectId, key). */
export type StartAgentJobOptions = { key: string; taskQueue?: string };

/**
 * The start of an agentJob with id `agent-job/<projectId>/<key>`, input checked first (InputValidationError names
 * the field). A running job is joined; a closed one gets a new run, which the job's create record answers (same
 * prompt, `alreadyCreatedBy` in the result) or refuses as AgentJobKeyInUse (another prompt). Shared by
 * `startAgentJob` and the Nexus operation.
 */
export function agentJobStartOptions(
  input: AgentJobInput,
  options: StartAgentJobOptions,
): WorkflowStartOptions<AgentJobWorkflow> & { workflowId: string } {
  const key = parseOrThrow(idempotencyKeySchema, options.key, 'idempotency key');
  parseOrThrow(agentJobInputSchema, input, 'agentJob input');
  if (input.continuation !== undefined) {
    const issue = { field: 'continuation', rule: 'is set by the workflow itself' };
    throw new InputValidationError([issue], 'agentJob input');
  }
  return {
    ...jobStart(agentJobWorkflowId(input.projectId, key), input, options.taskQueue),
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  };
}

function jobStart(workflowId: string, input: AgentJobInput, taskQueue: string | undefined) {
  const { projectId, jobId, prompt } = input;
  return {
    workflowId,
    taskQueue: taskQueue ?? taskQueueFromEnv(),
    args: [input] as [AgentJobInput],
    staticSummary: truncate(
      (jobId === undefined ? '' : `Job ${jobId}: `) + prompt.trim().split('\n', 1)[0],
      200,
    ),
    staticDetails: `**Project:** ${projectId}\n\n**Prompt:**\n\n${truncate(prompt, 2000)}`,
    typedSearchAttributes: [
      { key: DocsProjectIdKey, value: projectId },
      ...(jobId === undefined ? [] : [{ key: AgentJobIdKey, value: jobId }]),
    ],
  };
}

export async function startAgentJob(
  client: Client,
  input: AgentJobInput,
  options: StartAgentJobOptions,
): Promise<AgentJobHandle> {
  return client.workflow.start<AgentJobWorkflow>(WorkflowType.agentJob, agentJobStartOptions(input, options));
}

/** The result (following continue-as-new); any failure rejects with WorkflowFailedError: see agentJobFailureOf. */
export async function awaitAgentJob(client: Client, workflowId: string) {
  return client.workflow.getHandle<AgentJobWorkflow>(workflowId).result();
}

/**
 * The workflow's getState, with the running poll activity's progress from describe() (what the Temporal UI shows):
 * the status and reads of its last attempt, the last service error, and its next attempt as nextPollAt.
 */
export async function getAgentJobState(client: Client, workflowId: string): Promise<AgentJobState> {
  const handle = client.workflow.getHandle(workflowId);
  const [state, { raw }] = await Promise.all([handle.query(getStateQuery), handle.describe()]);
  const poll = raw.pendingActivities?.find((a) => a.activityType?.name === 'pollAgentJob');
  if (!poll || state.pollingSince === null) return state;
  const failure = await decodeOptionalFailureToOptionalError(
    client.options.loadedDataConverter,
    poll.lastFailure,
  );
  const { status, polls, lastError } =
    failure instanceof ApplicationFailure ? pollProgressOf(failure) : ({ polls: 0 } as const);
  return {
    ...state,
    ...(status === undefined ? {} : { status }),
    polls: state.polls + polls,
    nextPollAt: poll.nextAttemptScheduleTime ? tsToDate(poll.nextAttemptScheduleTime).toISOString() : null,
    ...(lastError === undefined ? {} : { lastError: `reading the job: ${lastError}` }),
  };
}

/** Queues a follow-up (signal): delivered in order, once per messageId. Returns once the workflow has it. */
export async function sendFollowUp(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
): Promise<void> {
  await deliver(client, workflowId, request, (handle) => handle.signal(followUpSignal, request));
}

/**
 * Sends a follow-up and waits for the service's answer (update): the job as the service returned it. Rejects with
 * WorkflowUpdateFailedError when the workflow or the service refuses it, and FollowUpNotAcceptedError when the run
 * closed before it took the update; `followUpFailureOf` reads all three.
 */
export async function sendFollowUpAndWait(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
  options: { updateId?: string } = {},
) {
  // Only a failure before acceptance means nothing was sent; once accepted, the outcome is the update's.
  const update = await deliver(client, workflowId, request, (handle) =>
    handle.startUpdate(sendFollowUpUpdate, {
      ...options,
      args: [request],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    }),
  );
  return update.result();
}

/**
 * A follow-up that found the run closed (WorkflowNotFoundError, also "update aborted by closing workflow") was not
 * taken: nothing was sent, so it becomes FollowUpNotAcceptedError. An id no workflow has keeps its error.
 */
async function deliver<T>(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
  send: (handle: WorkflowHandle) => Promise<T>,
): Promise<T> {
  parseOrThrow(followUpRequestSchema, request, 'follow-up');
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await send(handle);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    const status = await handle.describe().then(
      (description) => description.status.name,
      () => undefined,
    );
    if (status === undefined) throw error;
    const why =
      status === 'RUNNING'
        ? 'its run closed (continued as new) before it took the follow-up, so nothing was sent: send it again'
        : `it closed (${status}) before it took the follow-up, so nothing was sent (followUpAnyState continues a closed job)`;
    throw new FollowUpNotAcceptedError(`Workflow ${workflowId}: ${why}`, workflowId, { cause: error });
  }
}

export interface FollowUpAnyStateOptions {
  taskQueue?: string;
  /** Polling of the new run, when one is started; by default the closed run's. */
  polling?: PollingOptions;
}

/**
 * A follow-up whatever the workflow's state. Running: it is signalled. Closed: a new run of the same workflow id is
 * signal-with-started on the same service job (closedJobOf), with the same polling and knowing every messageId
 * the job's runs sent: one that was sent is not sent again (`earlierStatus`: its status, and `runId` the closed
 * run that had it), one that was refused is. A job failed, archived or not found, or a run that closed before
 * any job existed, throws FollowUpNotAcceptedError saying why.
 */
export async function followUpAnyState(
  client: Client,
  workflowId: string,
  request: FollowUpRequest,
  options: FollowUpAnyStateOptions = {},
) {
  parseOrThrow(followUpRequestSchema, request, 'follow-up');
  const handle = client.workflow.getHandle<AgentJobWorkflow>(workflowId);
  const last = await handle.describe();
  if (last.status.name === 'RUNNING') {
    try {
      await handle.signal(followUpSignal, request);
      const jobId = last.typedSearchAttributes.get(AgentJobIdKey);
      return { workflowId, runId: last.runId, startedNewRun: false, jobId };
    } catch (error) {
      // It closed between describe and signal: the job continues in a new run, below.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  const job = await closedJobOf(client, workflowId, last);
  if (job.refusal !== undefined) throw new FollowUpNotAcceptedError(job.refusal, workflowId);
  const { run, jobId, projectId } = job;
  const earlier = await earlierRunsOf(client, workflowId);
  const earlierStatus =
    request.messageId === undefined ? undefined : earlier?.sent.statusOf(request.messageId);
  if (earlierStatus !== undefined) {
    return { workflowId, runId: run.runId, startedNewRun: false, jobId, earlierStatus };
  }
  // A run terminated while its create was in flight has no job of its own: its own polling.
  const polling =
    options.polling ?? earlier?.polling ?? (await earlierRunOf(client, workflowId, run.runId)).polling;
  const input: AgentJobInput = { projectId, prompt: request.prompt, jobId, polling };
  const started = await client.workflow.signalWithStart<AgentJobWorkflow, [FollowUpRequest]>(
    WorkflowType.agentJob,
    {
      ...jobStart(workflowId, input, options.taskQueue ?? last.taskQueue),
      signal: followUpSignal,
      signalArgs: [request],
    },
  );
  const runId = started.signaledRunId;
  return { workflowId, runId, startedNewRun: runId !== last.runId, jobId };
}

export type FollowUpDelivery = Awaited<ReturnType<typeof followUpAnyState>>;

/**
 * The typed failure inside a WorkflowFailedError from awaitAgentJob, or undefined for any other error: `details`
 * is details[0] as sent (AgentJobResult for AgentJobFailed, `{ issues }` for InvalidInput, else AgentJobState).
 */
export function agentJobFailureOf(error: unknown) {
  const failure = error instanceof WorkflowFailedError ? error.cause : undefined;
  if (!(failure instanceof ApplicationFailure)) return undefined;
  const details: unknown = failure.details?.[0];
  const sent = (details ?? {}) as Partial<AgentJobState> & { issues?: InputIssue[] };
  const { jobId, status, prLink, polls, issues, followUps = [] } = sent;
  const type = failure.type ?? 'Error';
  return { type, message: failure.message, details, jobId, status, prLink, polls, followUps, issues };
}

/**
 * Why a follow-up failed: the workflow's or the service's refusal (a WorkflowUpdateFailedError) or the client's
 * FollowUpNotAcceptedError; undefined for any other error (Temporal unreachable, an unknown workflow id).
 */
export function followUpFailureOf(error: unknown): { type: string; message: string } | undefined {
  if (error instanceof FollowUpNotAcceptedError) return { type: error.name, message: error.message };
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    return { type: error.cause.type ?? 'Error', message: error.cause.message };
  }
  return undefined;
}
