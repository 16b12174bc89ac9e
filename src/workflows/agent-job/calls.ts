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
  AgentJobActivityFailureType,
  AgentJobFailureType,
  KNOWN_JOB_STATUSES,
  pollProgressOf,
  STATUS_NOT_FOUND,
  STATUS_UNREAD,
  type AgentJobFailureTypeName,
} from '../../contract/agent-job-constants';
import { BudgetFailureType, type PermitGrant } from '../../contract/budget';
import { DocsApiFailureType, REJECTION_FAILURE_TYPES, docsApiDetailsOf } from '../../contract/failure-types';
import { truncate } from '../../contract/text';
import { refusalOf } from '../budget/permits';
import {
  isRead,
  isTerminal,
  iso,
  refreshVisibility,
  statusOf,
  toAgentJobState,
  toResult,
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

const { recordCreate } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '1 minute',
});

/**
 * Polling is this one activity (Temporal's infrequent-polling pattern): each attempt reads the job once, and a
 * job still running fails the attempt with a benign failure whose nextRetryDelay is the next interval, so the
 * waits make no history event. The initial interval here applies only to a failure without nextRetryDelay.
 */
const { pollAgentJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    nonRetryableErrorTypes: [...REJECTION_FAILURE_TYPES],
  },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  priority: { priorityKey: 5 },
});

/**
 * What a failed create or message means: `resend` the service cannot have acted (connection refused, 429, 503);
 * `rejected` it refused for good; `unknown` it may have acted (timeout, worker crash, other 5xx): never re-sent.
 */
type CallOutcome =
  | { kind: 'resend'; reason: string; retryAfterMs: number | undefined }
  | { kind: 'rejected'; reason: string; status: number | undefined }
  | { kind: 'unknown'; reason: string; jobId?: string };

function classify(error: unknown): CallOutcome {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure) {
    return { kind: 'unknown', reason: `no answer within the activity's ${cause.timeoutType ?? ''} timeout` };
  }
  const reason = truncate(messageOf(cause), 300);
  if (!(cause instanceof ApplicationFailure)) return { kind: 'unknown', reason };
  const details = docsApiDetailsOf(cause.details);
  if (cause.nonRetryable) return { kind: 'rejected', reason, status: details?.status };
  if (details?.safeToRetry === true) return { kind: 'resend', reason, retryAfterMs: details.retryAfterMs };
  return { kind: 'unknown', reason, ...(details?.jobId === undefined ? {} : { jobId: details.jobId }) };
}

/** Re-sends of what the service cannot have acted on: Retry-After, else 1 s, 2 s, 4 s... up to 1 min. */
function scheduleResend(state: RunState, retryAfterMs: number | undefined): string {
  state.resendAt = Date.now() + (retryAfterMs ?? Math.min(60_000, 1000 * 2 ** state.resendAttempt));
  state.resendAttempt += 1;
  return iso(state.resendAt);
}

function resetResend(state: RunState): void {
  state.resendAttempt = 0;
  state.resendAt = 0;
}

export function messageOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return messageOf(error.cause);
  return error instanceof Error ? error.message : String(error);
}

function typeOf(error: unknown): string | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

export async function attemptCreate(state: RunState): Promise<void> {
  const permit = await acquirePermit(state);
  try {
    const answer = await spendingPermit(state, permit, () =>
      createAgentJob.executeWithOptions(
        { summary: `Create the agent job: ${firstLine(state.input.prompt)}` },
        [{ projectId: state.projectId, prompt: state.input.prompt, ...permitHeld(permit) }],
      ),
    );
    const job = jobOf(state, answer);
    created(state, job);
    log.info('Agent job created', { jobId: job.id, projectId: state.projectId, status: job.status });
    if (answer.unrecorded === true) await recordThisCreate(state, job.id);
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (typeOf(error) === AgentJobFailureType.keyInUse) throw keyInUse(error);
    const outcome = classify(error);
    if (outcome.kind === 'rejected') {
      throw failure(
        state,
        AgentJobFailureType.createRejected,
        `The service rejected the create of the agent job: ${outcome.reason}`,
        error,
      );
    }
    if (outcome.kind === 'unknown' && outcome.jobId !== undefined) {
      // A malformed answer that named the new job: it exists; reading it tells its status.
      created(state, { id: outcome.jobId, status: STATUS_UNREAD, prLink: null });
      await recordThisCreate(state, outcome.jobId);
      return;
    }
    if (outcome.kind === 'unknown') {
      await recordThisCreate(state, undefined);
      throw failure(
        state,
        AgentJobFailureType.createOutcomeUnknown,
        `Creating the agent job may or may not have succeeded (${outcome.reason}). It was not sent again, so that ` +
          `no second job is created: look at project ${state.projectId}'s jobs at the service before starting another.`,
        error,
      );
    }
    state.lastError = `create not accepted yet, sending again at ${scheduleResend(state, outcome.retryAfterMs)}: ${outcome.reason}`;
  } finally {
    refreshVisibility(state);
  }
}

/**
 * Writes the create record when the create activity could not (timed out, or its write failed): idempotent, the
 * first record stays. Runs to its end in a cancelled run.
 */
async function recordThisCreate(state: RunState, jobId: string | undefined): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() =>
      recordCreate({ projectId: state.projectId, prompt: state.input.prompt, jobId }),
    );
  } catch (error) {
    log.error('The create record could not be written: a new run of this workflow id could create again', {
      jobId,
      error: messageOf(error),
    });
  }
}

function created(state: RunState, job: AgentJob): void {
  state.jobId = job.id;
  state.lastError = null;
  resetResend(state);
  applyJob(state, job);
}

/** The job of an activity's answer; a create answered from its record brings the earlier runs' follow-ups. */
function jobOf(state: RunState, answer: AgentJobAnswer): AgentJob {
  const { responseWarnings, alreadyCreatedBy, earlier, unrecorded: _unrecorded, ...job } = answer;
  if (alreadyCreatedBy !== undefined) {
    state.alreadyCreatedBy = alreadyCreatedBy;
    if (earlier !== undefined) state.followUps.addEarlier(earlier);
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

/** Sends the head of the queue, once. The poll activity, if any, keeps running meanwhile. */
export async function deliverNextFollowUp(state: RunState): Promise<void> {
  const next = state.followUps.head();
  if (!next || state.jobId === null) return;
  const jobId = state.jobId;
  const permit = await acquirePermit(state);
  // In the workflow task that schedules the send: a run replayed from here (a query of a terminated run) knows
  // the service may have it.
  state.followUps.sendingHead();
  state.messagesSent += 1;
  state.pollAfterMessage = true;
  try {
    const answer = await spendingPermit(state, permit, () =>
      sendAgentJobMessage.executeWithOptions(
        { summary: `Send follow-up ${next.messageId}: ${firstLine(next.prompt)}` },
        [{ projectId: state.projectId, jobId, prompt: next.prompt, ...permitHeld(permit) }],
      ),
    );
    const job = jobOf(state, answer);
    state.followUps.deliverHead(job);
    state.lastError = null;
    resetResend(state);
    applyJob(state, job);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const outcome = classify(error);
    if (outcome.kind === 'resend') {
      state.followUps.headNotTaken();
      state.lastError = `follow-up ${next.messageId} not accepted yet, sending again at ${scheduleResend(state, outcome.retryAfterMs)}: ${outcome.reason}`;
    } else {
      const status = outcome.kind === 'rejected' ? 'rejected' : 'outcome_unknown';
      state.followUps.failHead(status, outcome.reason);
      state.lastError = `follow-up ${next.messageId} ${status.replace('_', ' ')}: ${outcome.reason}`;
      log.warn('Follow-up not delivered', { messageId: next.messageId, status, reason: outcome.reason });
      resetResend(state);
      // Refused for the job's state (failed, archived): read it before the next, which it may refuse unsent.
      if (outcome.kind === 'rejected' && outcome.status === 409) state.readBeforeNextMessage = true;
    }
  } finally {
    refreshVisibility(state);
  }
}

/**
 * Starts the poll activity; it returns when the job is terminal or its status is no longer the one shown, and
 * ends the run (state.pollFailure) when the job is unknown, the read is refused, or the deadline passed.
 */
export function startPoll(state: RunState): void {
  const sentBefore = state.messagesSent;
  state.pollStartedAt = Date.now();
  state.poll = poll(state, isRead(state) ? statusOf(state) : null)
    .then(
      (polled) => {
        if (polled && state.messagesSent === sentBefore) state.pollAfterMessage = false;
      },
      (error: unknown) => {
        state.pollFailure = error instanceof Error ? error : new Error(String(error));
      },
    )
    .finally(() => {
      state.poll = null;
      refreshVisibility(state);
    });
  refreshVisibility(state);
}

/**
 * A follow-up was refused with 409: the job is read once (the same activity, returning its first read) before
 * the next is sent, which the job's state may refuse without a request.
 */
export async function readBeforeNextMessage(state: RunState): Promise<void> {
  await poll(state, null);
  state.readBeforeNextMessage = false;
}

/** One poll activity to its end; false when the workflow's cancellation cancelled it. */
async function poll(state: RunState, status: string | null): Promise<boolean> {
  const jobId = state.jobId as string;
  const { initialIntervalMs, maxIntervalMs, backoffCoefficient } = state.polling;
  try {
    const { job, polls } = await pollAgentJob.executeWithOptions(
      {
        scheduleToCloseTimeout: Math.max(1000, state.deadlineAt - Date.now()),
        retry: { maximumInterval: Math.max(120_000, maxIntervalMs) },
        summary: status === null ? `Read job ${jobId}` : `Poll job ${jobId} until it ends`,
      },
      [
        {
          projectId: state.projectId,
          jobId,
          polling: { initialIntervalMs, maxIntervalMs, backoffCoefficient },
          status,
        },
      ],
    );
    state.polls += polls;
    state.lastError = null;
    applyJob(state, job);
    return true;
  } catch (error) {
    if (isCancellation(error)) return false;
    throw pollFailure(state, jobId, error);
  } finally {
    refreshVisibility(state);
  }
}

function pollFailure(state: RunState, jobId: string, error: unknown): Error {
  const timedOutNow =
    error instanceof ActivityFailure &&
    (error.cause instanceof TimeoutFailure || error.retryState === RetryState.TIMEOUT);
  if (timedOutNow) {
    state.polls += pollProgressIn(error)?.polls ?? 0;
    return timedOut(state, error);
  }
  if (typeOf(error) === DocsApiFailureType.notFound) {
    // Shown as the job's status: a job that does not exist takes no follow-ups.
    state.job = { ...(state.job ?? { id: jobId, prLink: null }), status: STATUS_NOT_FOUND };
    return failure(
      state,
      AgentJobFailureType.jobNotFound,
      `The service does not know the agent job ${jobId} in project ${state.projectId} (get-job answered 404)`,
      error,
    );
  }
  return failure(
    state,
    AgentJobFailureType.pollRejected,
    `The service rejected reading the agent job ${jobId}: ${messageOf(error)}`,
    error,
  );
}

/** The poll activity's last attempt, from its failure chain (see pollProgressOf). */
function pollProgressIn(error: unknown): ReturnType<typeof pollProgressOf> | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure) return pollProgressOf(cause);
    // Timed out between attempts: the last attempt's heartbeat has the reads and the last service error.
    if (
      cause instanceof TimeoutFailure &&
      cause.lastHeartbeatDetails != null &&
      !(cause.cause instanceof Error)
    ) {
      const { polls, lastError } = cause.lastHeartbeatDetails as { polls?: unknown; lastError?: unknown };
      return pollProgressOf({
        type: AgentJobActivityFailureType.stillRunning,
        message: '',
        details: [{ polls, lastError }],
      });
    }
  }
  return undefined;
}

export function applyJob(state: RunState, job: AgentJob): void {
  const before = statusOf(state);
  state.job = job;
  if (job.status === before) return;
  if (isTerminal(job.status))
    log.info('Agent job reached a terminal status', { jobId: job.id, status: job.status });
  else if (!(KNOWN_JOB_STATUSES as readonly string[]).includes(job.status) && job.status !== STATUS_UNREAD) {
    log.warn('The service reported a job status this worker does not know; treating the job as running', {
      jobId: job.id,
      status: job.status,
    });
  }
}

/**
 * An exclusive permit of the project's budget, so that creates and messages reach the service one at a time in
 * the order their asks reached the limiter. Its wait ends at the deadline, as AgentJobTimedOut.
 */
async function acquirePermit(state: RunState): Promise<PermitGrant | null> {
  const budget = state.budget;
  if (budget === null) return null;
  const refusal = state.budgetRefusal;
  state.budgetRefusal = undefined;
  state.queuedForBudget = true;
  refreshVisibility(state);
  try {
    return await budget.acquire({
      projectId: state.projectId,
      exclusive: true,
      deadlineAt: state.deadlineAt,
      ...(refusal === undefined ? {} : { refusal }),
    });
  } catch (error) {
    if (error instanceof ApplicationFailure && error.type === BudgetFailureType.waitTimedOut) {
      throw timedOut(state, error);
    }
    throw error;
  } finally {
    state.queuedForBudget = false;
  }
}

/** The call runs to its end whatever happens to the workflow; a 429 is reported with the next ask. */
async function spendingPermit<T>(
  state: RunState,
  permit: PermitGrant | null,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await CancellationScope.nonCancellable(call);
  } catch (error) {
    if (permit !== null) state.budgetRefusal = refusalOf(error, permit);
    throw error;
  }
}

function permitHeld(permit: PermitGrant | null): { permitId?: string } {
  return permit === null ? {} : { permitId: permit.permitId };
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
  return failure(
    state,
    AgentJobFailureType.jobFailed,
    `The agent job ${job.id} failed at the service (project ${state.projectId})`,
    undefined,
    toResult(state, job),
  );
}

export function timedOut(state: RunState, cause?: unknown): ApplicationFailure {
  const job = state.jobId
    ? `the service job ${state.jobId} may still run (the service has no cancel operation)`
    : 'no job was created';
  const serviceError = pollProgressIn(cause)?.lastError ?? state.lastError;
  return failure(
    state,
    AgentJobFailureType.timedOut,
    `The agent job did not reach a terminal status before the deadline (last status: ${statusOf(state)}, ` +
      `${state.polls} polls${serviceError ? `, last service error: ${serviceError}` : ''}); ${job}`,
    cause,
  );
}

/** The create activity's refusal (AgentJobKeyInUse), as the workflow's own failure with the same data. */
function keyInUse(error: unknown): ApplicationFailure {
  const refusal = error instanceof ActivityFailure ? error.cause : error;
  const details = refusal instanceof ApplicationFailure ? refusal.details?.[0] : undefined;
  return ApplicationFailure.create({
    type: AgentJobFailureType.keyInUse,
    message: messageOf(error),
    nonRetryable: true,
    details: [details],
    ...(error instanceof Error ? { cause: error } : {}),
  });
}
