import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { AgentJobFailureType, type AgentJobFailureTypeName } from '../../contract/agent-job-constants';
import { DocsApiFailureType } from '../../contract/failure-types';
import { messageOf } from './call-failures';
import { statusOf, toAgentJobState, toResult, type RunState } from './state';

/** A non-retryable failure of the workflow, carrying the state (or result) so callers need not query. */
function agentJobFailure(
  type: AgentJobFailureTypeName,
  message: string,
  details: unknown,
  cause?: unknown,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    details: [details],
    ...(cause instanceof Error ? { cause } : {}),
  });
}

export function jobFailed(state: RunState): ApplicationFailure {
  const job = state.job;
  const details = job ? toResult(state, job) : toAgentJobState(state);
  return agentJobFailure(
    AgentJobFailureType.jobFailed,
    `The agent job ${state.jobId} failed at the service (project ${state.projectId})`,
    details,
  );
}

export function timedOut(state: RunState, cause?: unknown): ApplicationFailure {
  const job = state.jobId
    ? `the service job ${state.jobId} may still run (the service has no cancel operation)`
    : 'no job was created';
  return agentJobFailure(
    AgentJobFailureType.timedOut,
    `The agent job did not reach a terminal status before the deadline (last status: ${statusOf(state)}, ${state.polls} polls); ${job}`,
    toAgentJobState(state),
    cause,
  );
}

export function createOutcomeUnknown(state: RunState, reason: string, cause: unknown): ApplicationFailure {
  return agentJobFailure(
    AgentJobFailureType.createOutcomeUnknown,
    `Creating the agent job may or may not have succeeded (${reason}). It was not sent again, so that no second job ` +
      `is created: look at project ${state.projectId}'s jobs at the service before starting another.`,
    toAgentJobState(state),
    cause,
  );
}

/** The create activity's refusal (AgentJobKeyInUse), as the workflow's own failure with the same data. */
export function keyInUse(error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const refusal = cause instanceof ApplicationFailure ? cause : undefined;
  return agentJobFailure(
    AgentJobFailureType.keyInUse,
    refusal?.message ?? messageOf(error),
    refusal?.details?.[0],
    error,
  );
}

export function createRejected(state: RunState, reason: string, cause: unknown): ApplicationFailure {
  return agentJobFailure(
    AgentJobFailureType.createRejected,
    `The service rejected the create of the agent job: ${reason}`,
    toAgentJobState(state),
    cause,
  );
}

export function pollRejected(
  state: RunState,
  failureType: string | undefined,
  cause: unknown,
): ApplicationFailure {
  const notFound = failureType === DocsApiFailureType.notFound;
  return agentJobFailure(
    notFound ? AgentJobFailureType.jobNotFound : AgentJobFailureType.pollRejected,
    notFound
      ? `The service does not know the agent job ${state.jobId} in project ${state.projectId} (get-job answered 404)`
      : `The service rejected reading the agent job ${state.jobId}: ${messageOf(cause)}`,
    toAgentJobState(state),
    cause,
  );
}
