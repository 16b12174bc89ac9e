import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  patched,
} from '@temporalio/workflow';
import {
  AgentJobFailureType,
  agentJobInputSchema,
  type AgentJobInput,
  type AgentJobResult,
} from '../../contract/agent-job';
import { InputValidationError, parseOrThrow } from '../../contract/validation';
import { registerHandlers } from './handlers';
import { runUntilDone } from './loop';
import { POLL_IN_ACTIVITY_PATCH } from './poll-activity';
import { initialState, type RunState } from './state';
import { refreshVisibility } from './visibility';

/**
 * Creates a documentation-service agent job once, polls it with backoff to a terminal status, delivers
 * follow-ups in order, and returns the contract's result (a `failed` job fails the workflow, typed).
 * Design and operator notes: docs/agent-job.md.
 */
export async function agentJob(input: AgentJobInput): Promise<AgentJobResult> {
  const state = initialState(validInput(input), Date.now(), patched(POLL_IN_ACTIVITY_PATCH));
  registerHandlers(state);
  refreshVisibility(state);
  try {
    return await runUntilDone(state);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    await closeFollowUps(state, error);
    throw error;
  }
}

/** Bad input fails the run at once, before any activity, naming the field (e.g. a hand-typed CLI start). */
function validInput(input: unknown): AgentJobInput {
  try {
    return parseOrThrow(agentJobInputSchema, input, 'agentJob input');
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    throw ApplicationFailure.create({
      type: AgentJobFailureType.invalidInput,
      message: error.message,
      nonRetryable: true,
      details: [{ issues: error.issues }],
    });
  }
}

/**
 * The run ends in failure or cancellation: waiting updates fail with FollowUpNotSent (queued signals stay
 * listed as pending), and the state says that the service job may still run, as there is no cancel operation.
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
