import {
  allHandlersFinished,
  condition,
  log,
  makeContinueAsNewFunc,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentJobInput, AgentJobResult } from '../../contract/agent-job';
import { InvariantError } from '../../contract/errors';
import { attemptCreate, deliverNextFollowUp } from './job-calls';
import { pollInActivity } from './poll-activity';
import {
  isFinished,
  needsPolling,
  refusesFollowUps,
  statusOf,
  STATUS_UNREAD,
  toContinuation,
  toResult,
  type RunState,
} from './state';
import { refreshVisibility } from './visibility';
import { jobFailed, timedOut } from './workflow-failures';

/**
 * The workflow's one loop. Each turn does the first thing that is due — create the job, send the next
 * follow-up, poll — or waits until the next of them, a new follow-up, or the deadline. One loop means
 * follow-ups are sent one at a time, in order, and never while a poll is in flight.
 */
export async function runUntilDone(state: RunState): Promise<AgentJobResult> {
  for (;;) {
    if (isFinished(state)) {
      // Update handlers settle with their follow-up; let them return their answers before closing.
      await condition(() => allHandlersFinished() || state.followUps.pendingCount > 0);
      if (state.followUps.pendingCount === 0) return finish(state);
    }
    const now = Date.now();
    if (now >= state.deadlineAt) throw timedOut(state);
    // Between any two calls (follow-ups included): nothing is in flight here, queued signals travel on.
    if (continueAsNewDue(state) && allHandlersFinished()) await continueAsNew(state);

    if (state.jobId === null) {
      if (now >= state.resendAt) {
        await attemptCreate(state);
        continue;
      }
    } else if (
      state.job === null ||
      statusOf(state) === STATUS_UNREAD ||
      (state.readBeforeNextMessage && state.followUps.pendingCount > 0)
    ) {
      // Attached to an existing job, known by id only, or a follow-up was refused with 409: read it at once.
      await pollInActivity(state, { returnOnFirstRead: true });
      continue;
    } else if (state.followUps.pendingCount > 0 && refusesFollowUps(statusOf(state))) {
      state.followUps.rejectAll(`not sent: job ${state.jobId} is ${statusOf(state)}`);
      refreshVisibility(state);
      continue;
    } else if (state.followUps.pendingCount > 0 && now >= state.resendAt) {
      await deliverNextFollowUp(state);
      continue;
    } else if (needsPolling(state) && now >= (state.nextPollAt ?? now)) {
      // The poll activity makes no event while it waits: a run continues as new only between polls.
      await pollInActivity(state);
      continue;
    }

    await waitForNextDue(state);
  }
}

function finish(state: RunState): AgentJobResult {
  const job = state.job;
  if (job === null) throw new InvariantError('finish() before the job exists');
  refreshVisibility(state);
  if (job.status === 'failed') throw jobFailed(state);
  return toResult(state, job);
}

/** Sleeps until the next due time, or until a follow-up arrives (which may be sent at once). */
async function waitForNextDue(state: RunState): Promise<void> {
  const candidates = [state.deadlineAt];
  if (state.jobId === null) candidates.push(state.resendAt);
  if (needsPolling(state) && state.nextPollAt !== null) candidates.push(state.nextPollAt);
  if (state.jobId !== null && state.followUps.pendingCount > 0) candidates.push(state.resendAt);
  const wakeAt = Math.min(...candidates);
  const arrivals = state.arrivals;
  const summary =
    state.jobId === null
      ? 'Wait to send the create again'
      : wakeAt === state.nextPollAt
        ? `Wait for poll ${state.polls + 1}`
        : 'Wait to send the follow-up again';
  await condition(() => state.arrivals !== arrivals, Math.max(1, wakeAt - Date.now()), { summary });
}

function continueAsNewDue(state: RunState): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= state.continueAsNewAfterEvents;
}

async function continueAsNew(state: RunState): Promise<never> {
  const info = workflowInfo();
  log.info('Continuing as new to keep the history bounded', {
    historyLength: info.historyLength,
    suggested: info.continueAsNewSuggested,
    pendingFollowUps: state.followUps.pendingCount,
  });
  const next: AgentJobInput = {
    projectId: state.projectId,
    prompt: state.input.prompt,
    ...(state.input.polling === undefined ? {} : { polling: state.input.polling }),
    ...(state.jobId === null ? {} : { jobId: state.jobId }),
    // The earlier runs' follow-ups are in the continuation's records.
    ...(state.input.continueAsNewAfterEvents === undefined
      ? {}
      : { continueAsNewAfterEvents: state.input.continueAsNewAfterEvents }),
    continuation: toContinuation(state),
  };
  // Search attributes are passed on explicitly: they hold the job id and status the next run starts from.
  return makeContinueAsNewFunc<(input: AgentJobInput) => Promise<AgentJobResult>>({
    typedSearchAttributes: info.typedSearchAttributes,
  })(next);
}
