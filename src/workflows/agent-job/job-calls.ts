import { isCancellation, log, workflowInfo } from '@temporalio/workflow';
import type { AgentJob } from '../../contract/agent-job';
import { createAgentJob, getAgentJob, sendAgentJobMessage } from './activity-proxies';
import { pollDelayMs, pollJitterKey, resendDelayMs } from './backoff';
import { classifyCallFailure, failureTypeOf, isTimeout, shorten } from './call-failures';
import { isKnownStatus, isTerminal, iso, statusOf, type RunState } from './state';
import { refreshVisibility } from './visibility';
import { createOutcomeUnknown, createRejected, pollRefused, timedOut } from './workflow-failures';

const SUMMARY_PROMPT_CHARS = 80;

/** One create attempt. Success stores the job id in state, where it stays: the job is never created twice. */
export async function attemptCreate(state: RunState): Promise<void> {
  try {
    const job = await createAgentJob.executeWithOptions(
      { summary: `Create the agent job: ${firstLine(state.input.prompt)}` },
      [{ projectId: state.projectId, prompt: state.input.prompt }],
    );
    state.jobId = job.id;
    state.resendAttempt = 0;
    state.resendAt = 0;
    state.lastError = null;
    applyJob(state, job);
    schedulePoll(state, 0);
    log.info('Agent job created', { jobId: job.id, projectId: state.projectId, status: job.status });
  } catch (error) {
    if (isCancellation(error)) throw error;
    const outcome = classifyCallFailure(error);
    if (outcome.kind === 'refused') throw createRejected(state, outcome.reason, error);
    if (outcome.kind === 'unknown') throw createOutcomeUnknown(state, outcome.reason, error);
    state.resendAt = Date.now() + resendDelayMs(state.resendAttempt, outcome.retryAfterMs);
    state.resendAttempt += 1;
    state.lastError = `create not accepted yet, sending again at ${iso(state.resendAt)}: ${outcome.reason}`;
  } finally {
    refreshVisibility(state);
  }
}

/** One poll: get-job as a short activity whose own retries absorb transient errors (they are not polls). */
export async function pollJob(state: RunState): Promise<void> {
  const jobId = state.jobId as string;
  const remaining = Math.max(1000, state.deadlineAt - Date.now());
  let job: AgentJob;
  try {
    job = await getAgentJob.executeWithOptions(
      { scheduleToCloseTimeout: remaining, summary: `Poll job ${jobId} (poll ${state.polls + 1})` },
      [{ projectId: state.projectId, jobId }],
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (isTimeout(error)) throw timedOut(state, error);
    throw pollRefused(state, failureTypeOf(error), error);
  }
  state.polls += 1;
  state.pollAfterMessage = false;
  state.lastError = null;
  applyJob(state, job);
  schedulePoll(state, state.backoffStep + 1);
  refreshVisibility(state);
}

/** Sends the follow-up at the head of the queue, once; never two in flight (one loop calls this). */
export async function deliverNextFollowUp(state: RunState): Promise<void> {
  const next = state.followUps.head();
  if (!next || state.jobId === null) return;
  try {
    const job = await sendAgentJobMessage.executeWithOptions(
      { summary: `Send follow-up ${next.messageId}: ${firstLine(next.prompt)}` },
      [{ projectId: state.projectId, jobId: state.jobId, prompt: next.prompt }],
    );
    state.followUps.deliverHead(job);
    state.lastError = null;
    applyJob(state, job);
    afterMessage(state);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const outcome = classifyCallFailure(error);
    if (outcome.kind === 'resend') {
      state.resendAt = Date.now() + resendDelayMs(state.resendAttempt, outcome.retryAfterMs);
      state.resendAttempt += 1;
      state.lastError = `follow-up ${next.messageId} not accepted yet, sending again at ${iso(state.resendAt)}: ${outcome.reason}`;
    } else {
      const status = outcome.kind === 'refused' ? 'rejected' : 'outcome_unknown';
      state.followUps.failHead(status, outcome.reason);
      state.lastError = `follow-up ${next.messageId} ${status === 'rejected' ? 'rejected' : 'outcome unknown'}: ${outcome.reason}`;
      log.warn('Follow-up not delivered', { messageId: next.messageId, status, reason: outcome.reason });
      // An unknown outcome may have reactivated the job: read it again before calling it finished.
      if (outcome.kind === 'unknown') afterMessage(state);
      else {
        state.resendAttempt = 0;
        state.resendAt = 0;
      }
    }
  } finally {
    refreshVisibility(state);
  }
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
  if (job.status !== before && !isKnownStatus(job.status)) {
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
  return shorten(text.trim().split('\n', 1)[0] ?? '', SUMMARY_PROMPT_CHARS);
}
