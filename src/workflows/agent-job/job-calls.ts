import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentJobAnswer } from '../../activities/agent-job';
import type { AgentJob } from '../../contract/agent-job';
import { AgentJobFailureType } from '../../contract/agent-job-constants';
import { BudgetFailureType, type PermitGrant } from '../../contract/budget';
import { refusalOf } from '../budget/permits';
import { createAgentJob, recordCreate, sendAgentJobMessage } from './activity-proxies';
import { pollDelayMs, pollJitterKey } from '../../contract/poll-schedule';
import { classifyCallFailure, failureTypeOf, messageOf, resendDelayMs } from './call-failures';
import { truncate } from '../../contract/text';
import { isKnownStatus, isTerminal, iso, statusOf, STATUS_UNREAD, type RunState } from './state';
import { refreshVisibility } from './visibility';
import { createOutcomeUnknown, createRejected, keyInUse, timedOut } from './workflow-failures';

const SUMMARY_PROMPT_CHARS = 80;

/** One create attempt. Success stores the job id in state, where it stays: the job is never created twice. */
export async function attemptCreate(state: RunState): Promise<void> {
  const permit = await acquireAgentPermit(state);
  try {
    const answer = await spendingPermit(state, permit, () =>
      createAgentJob.executeWithOptions(
        { summary: `Create the agent job: ${firstLine(state.input.prompt)}` },
        [{ projectId: state.projectId, prompt: state.input.prompt, ...permitHeld(permit) }],
      ),
    );
    const job = jobOf(answer, state);
    created(state, job);
    log.info('Agent job created', { jobId: job.id, projectId: state.projectId, status: job.status });
    if (answer.unrecorded === true) await recordThisCreate(state, job.id);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const outcome = classifyCallFailure(error);
    if (failureTypeOf(error) === AgentJobFailureType.keyInUse) throw keyInUse(error);
    if (outcome.kind === 'rejected') throw createRejected(state, outcome.reason, error);
    if (outcome.kind === 'unknown' && outcome.jobId !== undefined) {
      // The service answered with the new job's id beside a field it needs that was odd: the job exists, and
      // reading it tells its status. Its id is never lost, and the create is never sent again.
      created(state, { id: outcome.jobId, status: STATUS_UNREAD, prLink: null });
      log.warn('The create answer was malformed but named the job: polling it', {
        jobId: outcome.jobId,
        reason: outcome.reason,
      });
      await recordThisCreate(state, outcome.jobId);
      return;
    }
    if (outcome.kind === 'unknown') {
      await recordThisCreate(state, undefined);
      throw createOutcomeUnknown(state, outcome.reason, error);
    }
    state.resendAt = Date.now() + resendDelayMs(state.resendAttempt, outcome.retryAfterMs);
    state.resendAttempt += 1;
    state.lastError = `create not accepted yet, sending again at ${iso(state.resendAt)}: ${outcome.reason}`;
  } finally {
    refreshVisibility(state);
  }
}

/**
 * Records a create the service may have acted on, so that no later run of this workflow id (a reset, a new start)
 * sends a second create. The create activity records it itself unless it timed out or its write failed, which the
 * workflow cannot tell apart from a failure it did record: this write is idempotent (the first record stays), so
 * it runs on every such outcome. Runs to its end even in a cancelled run.
 */
async function recordThisCreate(state: RunState, jobId: string | undefined): Promise<void> {
  const create = { projectId: state.projectId, prompt: state.input.prompt, jobId };
  try {
    await CancellationScope.nonCancellable(() => recordCreate(create));
  } catch (error) {
    log.error('The create record could not be written: a new run of this workflow id could create again', {
      jobId,
      error: messageOf(error),
    });
  }
}

function created(state: RunState, job: AgentJob): void {
  state.jobId = job.id;
  state.resendAttempt = 0;
  state.resendAt = 0;
  state.lastError = null;
  applyJob(state, job);
  schedulePoll(state, 0);
}

/**
 * The job of an activity's answer; fields the service sent with an unexpected type were dropped, and are logged.
 * A create answered from its record marks the run as one that created nothing.
 */
function jobOf(answer: AgentJobAnswer, state: RunState): AgentJob {
  const { responseWarnings, alreadyCreatedBy, unrecorded: _unrecorded, ...job } = answer;
  if (alreadyCreatedBy !== undefined) {
    state.alreadyCreatedBy = alreadyCreatedBy;
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

/** Sends the follow-up at the head of the queue, once; never two in flight (one loop calls this). */
export async function deliverNextFollowUp(state: RunState): Promise<void> {
  const next = state.followUps.head();
  if (!next || state.jobId === null) return;
  const jobId = state.jobId;
  const permit = await acquireAgentPermit(state);
  // In the workflow task that schedules the send: a run replayed from here on (a query of a terminated run, a
  // reset) knows that the service may have it.
  state.followUps.sendingHead();
  try {
    const job = jobOf(
      await spendingPermit(state, permit, () =>
        sendAgentJobMessage.executeWithOptions(
          { summary: `Send follow-up ${next.messageId}: ${firstLine(next.prompt)}` },
          [{ projectId: state.projectId, jobId, prompt: next.prompt, ...permitHeld(permit) }],
        ),
      ),
      state,
    );
    state.followUps.deliverHead(job);
    state.lastError = null;
    applyJob(state, job);
    afterMessage(state);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const outcome = classifyCallFailure(error);
    if (outcome.kind === 'resend') {
      state.followUps.headNotTaken();
      state.resendAt = Date.now() + resendDelayMs(state.resendAttempt, outcome.retryAfterMs);
      state.resendAttempt += 1;
      state.lastError = `follow-up ${next.messageId} not accepted yet, sending again at ${iso(state.resendAt)}: ${outcome.reason}`;
    } else {
      const status = outcome.kind === 'rejected' ? 'rejected' : 'outcome_unknown';
      state.followUps.failHead(status, outcome.reason);
      state.lastError = `follow-up ${next.messageId} ${status === 'rejected' ? 'rejected' : 'outcome unknown'}: ${outcome.reason}`;
      log.warn('Follow-up not delivered', { messageId: next.messageId, status, reason: outcome.reason });
      // An unknown outcome may have reactivated the job: read it again before calling it finished.
      if (outcome.kind === 'unknown') afterMessage(state);
      else {
        state.resendAttempt = 0;
        state.resendAt = 0;
        // Refused because of the job's state (409: failed, archived): read it once before sending the next, so
        // the rest are answered without a request when the job takes no more.
        if (outcome.status === 409) state.readBeforeNextMessage = true;
      }
    }
  } finally {
    refreshVisibility(state);
  }
}

/**
 * An exclusive permit of the project's budget, so that creates and messages reach the service one at a time in
 * the order their asks reached the limiter. The wait ends at the workflow's deadline, as
 * AgentJobTimedOut.
 */
async function acquireAgentPermit(state: RunState): Promise<PermitGrant | null> {
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
    if (error instanceof ApplicationFailure && error.type === BudgetFailureType.waitTimedOut)
      throw timedOut(state, error);
    throw error;
  } finally {
    state.queuedForBudget = false;
  }
}

/**
 * Makes the call on the permit and notes a 429 for the next ask. The call runs to its end whatever happens to
 * the workflow: the request may already be at the service (neither create nor message is idempotent), so its
 * answer is always recorded, and a cancellation takes effect at the workflow's next wait. The activity gives
 * the permit back itself as soon as the service answered, also when the workflow was terminated meanwhile.
 */
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

/** The job continues after a message: read it again soon, from the initial interval. */
function afterMessage(state: RunState): void {
  state.resendAttempt = 0;
  state.resendAt = 0;
  state.pollAfterMessage = true;
  schedulePoll(state, 0);
}

export function schedulePoll(state: RunState, step: number): void {
  state.backoffStep = step;
  const key = pollJitterKey(workflowInfo().workflowId, state.polls + 1);
  state.nextPollAt = Date.now() + pollDelayMs(state.polling, step, key);
}

export function applyJob(state: RunState, job: AgentJob): void {
  const before = statusOf(state);
  state.job = job;
  if (job.status !== before && !isKnownStatus(job.status) && job.status !== STATUS_UNREAD) {
    log.warn('The service reported a job status this worker does not know; treating the job as running', {
      jobId: job.id,
      status: job.status,
    });
  }
  if (job.status !== before && isTerminal(job.status)) {
    log.info('Agent job reached a terminal status', {
      jobId: job.id,
      status: job.status,
      polls: state.polls,
    });
  }
}

function firstLine(text: string): string {
  return truncate(text.trim().split('\n', 1)[0] ?? '', SUMMARY_PROMPT_CHARS);
}
