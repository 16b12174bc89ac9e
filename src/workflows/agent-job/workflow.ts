import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentJobCreateRecord, AgentJobInput, AgentJobResult } from '../../contract/agent-job';
import { AgentJobFailureType } from '../../contract/agent-job-constants';
import { InputValidationError } from '../../contract/input-error';
import { agentJobWorkflowIdIssue } from '../../contract/names';
import { BudgetPermits } from '../budget/permits';
import { invalidInputOf } from '../input-check';
import {
  attemptCreate,
  deliverNextFollowUp,
  jobFailed,
  readBeforeNextMessage,
  startPoll,
  timedOut,
} from './calls';
import { registerHandlers } from './follow-ups';
import {
  continueAsNewAfter,
  initialState,
  isRead,
  isFinished,
  needsPolling,
  refreshVisibility,
  refusesFollowUps,
  statusOf,
  toContinuation,
  toResult,
  type RunState,
} from './state';

/**
 * Creates a documentation-service agent job once, polls it to a terminal status, delivers follow-ups in order,
 * and returns the contract's result (a `failed` job fails the workflow, typed). Design: docs/agent-job.md.
 */
export async function agentJob(input: AgentJobInput): Promise<AgentJobResult> {
  // Handlers are registered before the first await (signal-with-start); input that builds no state is refused
  // by the check just below. From here on, however the run ends, every update it accepted is answered.
  let state: RunState | undefined;
  try {
    state = initialState(input, Date.now());
    registerHandlers(state);
  } catch {
    state = undefined;
  }
  try {
    await failOnBadInput(input);
    if (!state) throw new Error('agentJob input passed its check but could not be read');
    const run = state;
    run.budget = new BudgetPermits('agent', () => refreshVisibility(run));
    refreshVisibility(run);
    return await runUntilDone(run);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (state) await closeFollowUps(state, error);
    throw error;
  }
}

/**
 * The record of a job's create (see client/agent-job-record.ts): it completes at once with the record as its
 * result, which Temporal keeps for the namespace's retention whatever happens to the job's own runs.
 */
export function agentJobCreateRecord(record: AgentJobCreateRecord): Promise<AgentJobCreateRecord> {
  return Promise.resolve(record);
}

/** Bad input (or a workflow id reserved for create records) fails the run before any call, naming the field. */
async function failOnBadInput(input: unknown): Promise<void> {
  const idIssue = agentJobWorkflowIdIssue(workflowInfo().workflowId);
  const issues = idIssue === undefined ? undefined : [{ field: 'workflowId', rule: idIssue }];
  const refusal = issues
    ? { message: new InputValidationError(issues, 'agentJob input').message, issues }
    : await invalidInputOf('agentJob', input);
  if (refusal === null) return;
  throw ApplicationFailure.create({
    type: AgentJobFailureType.invalidInput,
    message: refusal.message,
    nonRetryable: true,
    details: [{ issues: refusal.issues }],
  });
}

/**
 * The one loop: create the job, send the next follow-up, keep one poll activity running while the job needs
 * reading, or wait for a follow-up, the poll's end, a re-send time or the deadline. Follow-ups go out one at a
 * time, in order, while the poll activity keeps running.
 */
async function runUntilDone(state: RunState): Promise<AgentJobResult> {
  for (;;) {
    if (state.pollFailure) throw state.pollFailure;
    if (isFinished(state)) {
      // Update handlers settle with their follow-up; let them return their answers before closing.
      await condition(() => allHandlersFinished() || state.followUps.pendingCount > 0);
      if (state.followUps.pendingCount === 0) return finish(state);
    }
    const now = Date.now();
    // While the poll activity runs, its own timeout ends it at the deadline, naming the last service error.
    if (now >= state.deadlineAt && state.poll === null) throw timedOut(state);
    const info = workflowInfo();
    const continueAsNewDue = info.continueAsNewSuggested || info.historyLength >= continueAsNewAfter(state);
    if (continueAsNewDue && allHandlersFinished()) await continueAsNew(state);

    const pending = state.followUps.pendingCount > 0;
    if (state.jobId === null) {
      if (now >= state.resendAt) {
        await attemptCreate(state);
        continue;
      }
    } else if (pending && refusesFollowUps(statusOf(state))) {
      state.followUps.rejectAll(`not sent: job ${state.jobId} is ${statusOf(state)}`);
      refreshVisibility(state);
      continue;
    } else if (pending && state.readBeforeNextMessage) {
      await readBeforeNextMessage(state);
      continue;
    } else if (pending && isRead(state) && now >= state.resendAt) {
      await deliverNextFollowUp(state);
      continue;
    }
    if (state.poll === null && state.jobId !== null && (state.job === null || needsPolling(state))) {
      startPoll(state);
    }
    const wakeAt = Math.min(
      state.poll === null ? state.deadlineAt : Infinity,
      state.jobId === null || pending ? state.resendAt : Infinity,
    );
    const { arrivals, poll } = state;
    await condition(
      () => state.arrivals !== arrivals || state.poll !== poll,
      wakeAt === Infinity ? undefined : Math.max(1, wakeAt - Date.now()),
      {
        summary: state.jobId === null ? 'Wait to send the create again' : 'Wait for a follow-up or the poll',
      },
    );
  }
}

function finish(state: RunState): AgentJobResult {
  const job = state.job;
  if (job === null) throw new Error('finish() before the job exists');
  refreshVisibility(state);
  if (job.status === 'failed') throw jobFailed(state, job);
  return toResult(state, job);
}

async function continueAsNew(state: RunState): Promise<never> {
  const info = workflowInfo();
  log.info('Continuing as new to keep the history bounded', {
    historyLength: info.historyLength,
    pendingFollowUps: state.followUps.pendingCount,
  });
  const { input } = state;
  const next: AgentJobInput = {
    projectId: state.projectId,
    prompt: input.prompt,
    ...(input.polling === undefined ? {} : { polling: input.polling }),
    ...(state.jobId === null ? {} : { jobId: state.jobId }),
    ...(input.continueAsNewAfterEvents === undefined
      ? {}
      : { continueAsNewAfterEvents: input.continueAsNewAfterEvents }),
    continuation: toContinuation(state),
  };
  // Search attributes hold the job id and status the next run starts from.
  return makeContinueAsNewFunc<(input: AgentJobInput) => Promise<AgentJobResult>>({
    typedSearchAttributes: info.typedSearchAttributes,
  })(next);
}

/**
 * The run ends in failure or cancellation: waiting updates fail with FollowUpNotSent (queued signals stay listed
 * as pending, never sent), and the state says the service job may still run (the service has no cancel).
 */
async function closeFollowUps(state: RunState, error: unknown): Promise<void> {
  const cancelled = isCancellation(error);
  state.closingReason = cancelled ? 'workflow cancelled' : 'workflow failed';
  if (cancelled) {
    state.lastError =
      state.jobId === null
        ? 'workflow cancelled before the job was created'
        : `workflow cancelled: polling stopped, but the service job ${state.jobId} may still run (the service has no cancel operation)`;
    log.warn('Agent job workflow cancelled; the service job may still run', { jobId: state.jobId });
  }
  state.followUps.abandon(`not sent: ${state.closingReason}`);
  refreshVisibility(state);
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
}
