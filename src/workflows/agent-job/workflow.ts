import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentJobInput, AgentJobResult } from '../../contract/agent-job';
import { AgentJobFailureType } from '../../contract/agent-job-constants';
import { InvariantError } from '../../contract/errors';
import { InputValidationError, type InputIssue } from '../../contract/input-error';
import { agentJobWorkflowIdIssue } from '../../contract/names';
import { invalidInputOf } from '../input-check';
import { BudgetPermits } from '../budget/permits';
import { registerHandlers } from './handlers';
import { runUntilDone } from './loop';
import { initialState, type RunState } from './state';
import { refreshVisibility } from './visibility';

/**
 * Creates a documentation-service agent job once, polls it with backoff to a terminal status, delivers
 * follow-ups in order, and returns the contract's result (a `failed` job fails the workflow, typed).
 * Design and operator notes: docs/agent-job.md.
 */
export async function agentJob(input: AgentJobInput): Promise<AgentJobResult> {
  // Handlers are registered before the first await (signal-with-start), so the state is built before the
  // input check: valid input always builds one; input that cannot is refused by the check just below.
  const state = stateOrUndefined(input);
  if (state) registerHandlers(state);
  await failOnBadInput(input);
  if (!state) throw new InvariantError('agentJob input passed its check but could not be read');
  state.budget = new BudgetPermits('agent', () => refreshVisibility(state));
  refreshVisibility(state);
  try {
    return await runUntilDone(state);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    await closeFollowUps(state, error);
    throw error;
  }
}

function stateOrUndefined(input: AgentJobInput): RunState | undefined {
  try {
    return initialState(input, Date.now());
  } catch {
    return undefined;
  }
}

/**
 * Bad input fails the run at once, before any call to the service, naming the field (e.g. a hand-typed CLI
 * start); so does a workflow id reserved for create records. Checked with the contract's zod schema in a local
 * activity: zod stays out of the sandbox.
 */
async function failOnBadInput(input: unknown): Promise<void> {
  const idIssue = agentJobWorkflowIdIssue(workflowInfo().workflowId);
  const refusal =
    idIssue === undefined
      ? await invalidInputOf('agentJob', input)
      : invalidInput([{ field: 'workflowId', rule: idIssue }]);
  if (refusal === null) return;
  throw ApplicationFailure.create({
    type: AgentJobFailureType.invalidInput,
    message: refusal.message,
    nonRetryable: true,
    details: [{ issues: refusal.issues }],
  });
}

/**
 * The run ends in failure or cancellation: waiting updates fail with FollowUpNotSent (queued signals stay
 * listed as pending, never sent: a call in flight always ran to its end first), and the state says that the
 * service job may still run, as there is no cancel operation. The job id stays in AgentJobId and getState.
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

function invalidInput(issues: InputIssue[]): { message: string; issues: InputIssue[] } {
  return { message: new InputValidationError(issues, 'agentJob input').message, issues };
}
