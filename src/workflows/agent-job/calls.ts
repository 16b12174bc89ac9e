import { RetryState } from '@temporalio/common';
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  log,
  proxyActivities,
} from '@temporalio/workflow';
import type { AgentJobAnswer, createAgentJobActivities } from '../../activities/agent-job';
import type { AgentJob } from '../../contract/agent-job';
import {
  AgentJobFailureType,
  KNOWN_JOB_STATUSES,
  STATUS_NOT_FOUND,
  STATUS_UNREAD,
  callOutcomeOf,
  isTerminal,
  pollProgressIn,
  pollProgressOf,
  type AgentJobFailureTypeName,
  type PollProgress,
} from '../../contract/agent-job-constants';
import { BudgetFailureType, type PermitGrant } from '../../contract/budget';
import { DocsApiFailureType, truncate } from '../../contract/failure-types';
import { refusalOf } from '../budget/permits';
import {
  isRead,
  iso,
  refreshVisibility,
  statusOf,
  toAgentJobState,
  toResult,
  unreadJob,
  type RunState,
} from './state';

type Activities = ReturnType<typeof createAgentJobActivities>;

/**
 * Create and message are not idempotent: one attempt each, run to their end whatever happens to the workflow
 * (the request may be at the service). Priority 1 (polls 5): dispatched ahead of polls on the task queue.
 */
const { createAgentJob, sendAgentJobMessage } = proxyActivities<Activities>({
  startToCloseTimeout: '75 seconds',
  retry: { maximumAttempts: 1 },
  priority: { priorityKey: 1 },
});

/** Retried until written: a later run of the id that found no record would read the earlier runs' histories. */
const { recordCreate } = proxyActivities<Activities>({ startToCloseTimeout: '15 seconds' });

const { earlierFollowUps } = proxyActivities<Activities>({ startToCloseTimeout: '15 seconds' });

/**
 * Polling is this one activity, its retries the waits (no history event; see pollAgentJob). The initial interval
 * here applies only to a failure without nextRetryDelay.
 */
const { pollAgentJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
  },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  priority: { priorityKey: 5 },
});

function applicationFailureIn(error: unknown): ApplicationFailure | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

type Outcome = ReturnType<typeof callOutcomeOf> & { reason: string };

function outcomeOf(error: unknown): Outcome {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure) {
    return { kind: 'unknown', reason: `no answer within the activity's ${cause.timeoutType ?? ''} timeout` };
  }
  return { ...callOutcomeOf(applicationFailureIn(cause)), reason: truncate(messageOf(cause), 300) };
}

/** The service answered (a job, or a refusal): nothing waits to be sent again. */
function answered(state: RunState, job?: AgentJob): void {
  state.lastError = null;
  state.resendAttempt = 0;
  state.resendAt = 0;
  if (job) applyJob(state, job);
}

function messageOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return messageOf(error.cause);
  return error instanceof Error ? error.message : String(error);
}

/**
 * An exclusive permit of the project's budget, so that creates and messages reach the service one at a time in
 * the order their asks reached the limiter. Its wait ends at the deadline, as AgentJobTimedOut.
 */
async function acquirePermit(state: RunState): Promise<PermitGrant | undefined> {
  const refusal = state.budgetRefusal;
  state.budgetRefusal = undefined;
  state.queuedForBudget = state.budget !== null;
  refreshVisibility(state);
  try {
    return await state.budget?.ask({ exclusive: true, ...(refusal === undefined ? {} : { refusal }) });
  } catch (error) {
    if (!(error instanceof ApplicationFailure && error.type === BudgetFailureType.waitTimedOut)) throw error;
    throw timedOut(state, error);
  } finally {
    state.queuedForBudget = false;
  }
}

type Sent = { job: AgentJob & Pick<AgentJobAnswer, 'unrecorded'> } | { error: unknown; outcome: Outcome };

/**
 * A create or message, once, on its permit (a 429 is reported with the next ask): the job answered, its failure,
 * or undefined when the service cannot have acted on it and it is to be sent again.
 */
async function sendOnce(
  state: RunState,
  what: string,
  call: (permit: { permitId?: string }) => Promise<AgentJobAnswer>,
): Promise<Sent | undefined> {
  const permit = await acquirePermit(state);
  state.inFlight = `${what} sent at ${iso(Date.now())}, waiting for the service's answer`;
  refreshVisibility(state);
  try {
    const held = permit ? { permitId: permit.permitId } : {};
    return { job: jobOf(state, await CancellationScope.nonCancellable(() => call(held))) };
  } catch (error) {
    if (permit) state.budgetRefusal = refusalOf(error, permit);
    if (isCancellation(error)) throw error;
    const outcome = outcomeOf(error);
    if (outcome.kind !== 'resend') return { error, outcome };
    // The service cannot have acted on it: sent again after Retry-After, else 1 s, 2 s, 4 s... up to 1 min.
    const backoffMs = Math.min(60_000, 1000 * 2 ** state.resendAttempt);
    state.resendAt = Date.now() + (outcome.details?.retryAfterMs ?? backoffMs);
    state.resendAttempt += 1;
    state.lastError = `${what} not accepted yet, sending again at ${iso(state.resendAt)}: ${outcome.reason}`;
    return undefined;
  } finally {
    state.inFlight = null;
    refreshVisibility(state);
  }
}

/** The job of an activity's answer; one answered from the create record has earlier runs' follow-ups to learn. */
function jobOf(state: RunState, answer: AgentJobAnswer): AgentJob & Pick<AgentJobAnswer, 'unrecorded'> {
  const { responseWarnings, alreadyCreatedBy, ...job } = answer;
  if (alreadyCreatedBy !== undefined) {
    state.alreadyCreatedBy = alreadyCreatedBy;
    state.earlierUnread = true;
    log.warn('This workflow id created its job before: not created again, reading it', {
      jobId: job.id,
      createdByRun: alreadyCreatedBy.runId,
    });
  }
  if (responseWarnings !== undefined) {
    log.warn('The service answered fields of an unexpected type: they were dropped', {
      jobId: job.id,
      warnings: responseWarnings,
    });
  }
  return job;
}

export async function attemptCreate(state: RunState): Promise<void> {
  const { projectId, input } = state;
  const sent = await sendOnce(state, 'the create', (held) =>
    createAgentJob.executeWithOptions({ summary: `Create the agent job: ${firstLine(input.prompt)}` }, [
      { projectId, prompt: input.prompt, ...held },
    ]),
  );
  if (sent === undefined) return;
  if ('job' in sent) {
    const { unrecorded, ...job } = sent.job;
    answered(state, job);
    log.info('Agent job created', { jobId: job.id, projectId, status: job.status });
    if (unrecorded === true) await recordThisCreate(state, job.id);
    return;
  }
  const { error, outcome } = sent;
  const refusal = applicationFailureIn(error);
  const jobId = outcome.details?.jobId;
  if (refusal?.type === AgentJobFailureType.keyInUse) {
    throw failure(state, AgentJobFailureType.keyInUse, refusal.message, error, refusal.details?.[0]);
  } else if (outcome.kind === 'rejected') {
    const message = `The service rejected the create of the agent job: ${outcome.reason}`;
    throw failure(state, AgentJobFailureType.createRejected, message, error);
  } else if (jobId !== undefined) {
    // A malformed answer that named the new job: it exists; reading it tells its status.
    answered(state, unreadJob(jobId));
    await recordThisCreate(state, jobId);
  } else {
    await recordThisCreate(state, undefined);
    throw failure(
      state,
      AgentJobFailureType.createOutcomeUnknown,
      `Creating the agent job may or may not have succeeded (${outcome.reason}). It was not sent again, so that ` +
        `no second job is created: look at project ${projectId}'s jobs at the service before starting another.`,
      error,
    );
  }
}

/**
 * Writes the create record when the create activity could not (timed out, or its write failed): idempotent, the
 * first record stays. Runs to its end in a cancelled run.
 */
async function recordThisCreate(state: RunState, jobId: string | undefined): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    recordCreate({ projectId: state.projectId, prompt: state.input.prompt, jobId }),
  );
}

/** Sends the head of the queue, once. The poll activity, if any, keeps running meanwhile. */
export async function deliverNextFollowUp(state: RunState): Promise<void> {
  const next = state.followUps.head();
  const jobId = state.jobId;
  if (!next || jobId === null) return;
  const { messageId, prompt } = next;
  const sent = await sendOnce(state, `follow-up ${messageId}`, (held) => {
    // In the workflow task that schedules the send: a run replayed from here (a query of a terminated run)
    // knows the service may have it.
    state.followUps.sendingHead();
    state.pollAfterMessage = true;
    return sendAgentJobMessage.executeWithOptions(
      { summary: `Send follow-up ${messageId}: ${firstLine(prompt)}` },
      [{ projectId: state.projectId, jobId, prompt, ...held }],
    );
  });
  if (sent === undefined) {
    state.followUps.sendingHead(false);
  } else if ('job' in sent) {
    state.followUps.deliverHead(sent.job);
    answered(state, sent.job);
  } else {
    const { kind, reason, details } = sent.outcome;
    const status = kind === 'rejected' ? 'rejected' : 'outcome_unknown';
    state.followUps.failHead(status, reason);
    log.warn('Follow-up not delivered', { messageId, status, reason });
    answered(state);
    state.lastError = `follow-up ${messageId} ${status.replace('_', ' ')}: ${reason}`;
    // Refused for the job's state (failed, archived): read it before the next, which it may refuse unsent.
    if (kind === 'rejected' && details?.status === 409) state.readBeforeNextMessage = true;
  }
}

/**
 * Starts the poll activity; it returns when the job is terminal or its status is no longer the one shown, and
 * ends the run (state.pollFailure) when the job is unknown, the read is refused, or the deadline passed.
 */
export function startPoll(state: RunState): void {
  // It reads after every message sent so far; one sent while it runs sets pollAfterMessage again.
  state.pollAfterMessage = false;
  state.pollStartedAt = Date.now();
  state.poll = readJob(state, isRead(state) ? statusOf(state) : null)
    .catch((error: unknown) => {
      state.pollFailure = error as Error;
    })
    .finally(() => {
      state.poll = null;
    });
}

/** One poll activity to its end (`status` null: the first read returns). */
export async function readJob(state: RunState, status: string | null): Promise<void> {
  const jobId = state.jobId as string;
  try {
    // The one way a new run of a job it did not create learns what the job's earlier runs sent, before its first
    // read: nothing is sent before that read, and no messageId they sent is sent again (retried until read).
    if (state.earlierUnread) {
      const earlier = await earlierFollowUps();
      if (earlier !== undefined) state.followUps.addEarlier(earlier);
      state.earlierUnread = false;
    }
    const { job, polls } = await pollAgentJob.executeWithOptions(
      {
        scheduleToCloseTimeout: Math.max(1000, state.deadlineAt - Date.now()),
        retry: { maximumInterval: Math.max(120_000, state.polling.maxInterval) },
        summary: status === null ? `Read job ${jobId}` : `Poll job ${jobId} until it ends`,
      },
      [{ projectId: state.projectId, jobId, polling: state.polling, status }],
    );
    state.polls += polls;
    state.lastError = null;
    applyJob(state, job);
  } catch (error) {
    if (isCancellation(error)) return;
    if (
      error instanceof ActivityFailure &&
      (error.cause instanceof TimeoutFailure || error.retryState === RetryState.TIMEOUT)
    ) {
      state.polls += lastPollProgress(error)?.polls ?? 0;
      throw timedOut(state, error);
    }
    if (applicationFailureIn(error)?.type === DocsApiFailureType.notFound) {
      // Shown as the job's status: a job that does not exist takes no follow-ups.
      state.job = { ...(state.job as AgentJob), status: STATUS_NOT_FOUND };
      const message = `The service does not know the agent job ${jobId} in project ${state.projectId} (get-job answered 404)`;
      throw failure(state, AgentJobFailureType.jobNotFound, message, error);
    }
    const message = `The service rejected reading the agent job ${jobId}: ${messageOf(error)}`;
    throw failure(state, AgentJobFailureType.pollRejected, message, error);
  }
}

/** The poll activity's last attempt, from its failure chain. */
function lastPollProgress(error: unknown): PollProgress | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure) return pollProgressOf(cause);
    // Timed out between attempts: the last attempt's heartbeat has the reads and the last service error.
    if (
      cause instanceof TimeoutFailure &&
      cause.lastHeartbeatDetails != null &&
      !(cause.cause instanceof Error)
    ) {
      return pollProgressIn(cause.lastHeartbeatDetails);
    }
  }
  return undefined;
}

function applyJob(state: RunState, job: AgentJob): void {
  const before = statusOf(state);
  state.job = job;
  if (job.status === before) return;
  if (isTerminal(job.status)) {
    log.info('Agent job reached a terminal status', { jobId: job.id, status: job.status });
  } else if (
    !(KNOWN_JOB_STATUSES as readonly string[]).includes(job.status) &&
    job.status !== STATUS_UNREAD
  ) {
    log.warn('The service reported a job status this worker does not know; treating the job as running', {
      jobId: job.id,
      status: job.status,
    });
  }
}

function firstLine(text: string): string {
  return truncate(text.trim().split('\n', 1)[0] ?? '', 80);
}

/** A non-retryable failure of the workflow carrying the state (or the result of a failed job). */
function failure(
  state: RunState,
  type: AgentJobFailureTypeName,
  message: string,
  cause?: unknown,
  details: unknown = toAgentJobState(state),
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    details: [details],
    ...(cause instanceof Error ? { cause } : {}),
  });
}

export function jobFailed(state: RunState, job: AgentJob): ApplicationFailure {
  const message = `The agent job ${job.id} failed at the service (project ${state.projectId})`;
  return failure(state, AgentJobFailureType.jobFailed, message, undefined, toResult(state, job));
}

export function timedOut(state: RunState, cause?: unknown): ApplicationFailure {
  const job = state.jobId
    ? `the service job ${state.jobId} may still run (the service has no cancel operation)`
    : 'no job was created';
  const serviceError = lastPollProgress(cause)?.lastError ?? state.lastError;
  return failure(
    state,
    AgentJobFailureType.timedOut,
    `The agent job did not reach a terminal status before the deadline (last status: ${statusOf(state)}, ` +
      `${state.polls} polls${serviceError ? `, last service error: ${serviceError}` : ''}); ${job}`,
    cause,
  );
}
