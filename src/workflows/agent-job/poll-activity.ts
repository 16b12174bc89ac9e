import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { PolledJob } from '../../activities/poll-agent-job';
import { POLL_RETRY, pollAgentJob } from './activity-proxies';
import { failureTypeOf, isTimeout } from './call-failures';
import { applyJob, schedulePoll } from './job-calls';
import { STATUS_NOT_FOUND } from '../../contract/agent-job-constants';
import { DocsApiFailureType } from '../../contract/failure-types';
import { isTerminal, statusOf, STATUS_UNREAD, type RunState } from './state';
import { refreshVisibility } from './visibility';
import { pollRejected, timedOut } from './workflow-failures';

type PollEnd = { kind: 'polled'; result: PolledJob } | { kind: 'failed'; error: unknown };

/**
 * Polls until the job is terminal in one activity whose retries are the waits (see activities/poll-agent-job.ts).
 * A follow-up that arrives meanwhile (or a follow-up's re-send falling due) cancels the activity at once, so the
 * loop can send it; the next poll then starts again from initialInterval. The one path for every read: a job
 * attached by id (its status not known yet) and a read after a refused follow-up (`returnOnFirstRead`) come back
 * with the first answer.
 */
export async function pollInActivity(
  state: RunState,
  { returnOnFirstRead = false }: { returnOnFirstRead?: boolean } = {},
): Promise<void> {
  const jobId = state.jobId as string;
  const arrivals = state.arrivals;
  const scope = new CancellationScope();
  let settled = false;
  const poll: Promise<PollEnd> = scope
    .run(() =>
      pollAgentJob.executeWithOptions(
        {
          scheduleToCloseTimeout: Math.max(1000, state.deadlineAt - Date.now()),
          // Never below the job's own maxInterval, should the server cap nextRetryDelay at the policy's maximum.
          retry: {
            ...POLL_RETRY,
            maximumInterval: Math.max(POLL_RETRY.maximumInterval, state.polling.maxIntervalMs),
          },
          summary: `Poll job ${jobId} until it ends (from poll ${state.polls + 1})`,
        },
        [
          {
            projectId: state.projectId,
            jobId,
            polling: {
              initialIntervalMs: state.polling.initialIntervalMs,
              maxIntervalMs: state.polling.maxIntervalMs,
              backoffCoefficient: state.polling.backoffCoefficient,
            },
            firstPoll: state.polls + 1,
            firstStep: state.backoffStep,
            knownStatus: returnOnFirstRead ? STATUS_UNREAD : statusOf(state),
          },
        ],
      ),
    )
    .then(
      (result): PollEnd => ({ kind: 'polled', result }),
      (error: unknown): PollEnd => ({ kind: 'failed', error }),
    )
    .finally(() => {
      settled = true;
    });
  state.pollingSince = Date.now();
  state.nextPollAt = null;
  refreshVisibility(state);

  // A follow-up waiting for its re-send time also ends the poll when that time comes.
  const resendDue = state.followUps.pendingCount > 0 ? Math.max(1, state.resendAt - Date.now()) : undefined;
  await condition(() => settled || state.arrivals !== arrivals, resendDue);
  const interrupted = !settled;
  if (interrupted) scope.cancel();
  const end = await poll;
  state.pollingSince = null;
  if (interrupted && end.kind === 'failed' && isCancellation(end.error)) {
    // The reads the cancelled activity made are not known here (see docs/agent-job.md, getState); the loop
    // sends the follow-up, then polls again from initialInterval.
    state.nextPollAt = Date.now();
    refreshVisibility(state);
    return;
  }
  if (end.kind === 'failed') {
    if (isCancellation(end.error)) throw end.error;
    if (isTimeout(end.error)) throw timedOut(state, end.error);
    const failureType = failureTypeOf(end.error);
    if (failureType === DocsApiFailureType.notFound) {
      // Shown as the job's status (getState, AgentJobStatus): a job that does not exist takes no follow-ups.
      state.job = { ...(state.job ?? { id: jobId, prLink: null }), status: STATUS_NOT_FOUND };
    }
    throw pollRejected(state, failureType, end.error);
  }
  state.polls += end.result.polls;
  state.pollAfterMessage = false;
  state.readBeforeNextMessage = false;
  state.lastError = null;
  applyJob(state, end.result.job);
  // A new running status: shown now, then polled on from where the backoff was.
  if (!isTerminal(end.result.job.status)) schedulePoll(state, state.backoffStep + end.result.polls);
  refreshVisibility(state);
}
