import {
  ActivityFailure,
  DefaultFailureConverter,
  RetryState,
  TimeoutFailure,
  defaultPayloadConverter,
  type TimeoutType,
} from '@temporalio/common';

const converter = new DefaultFailureConverter();

/** An error as it reaches the other side of Temporal: encoded to a Failure message and decoded again. */
export function throughTemporal(error: Error): Error {
  return converter.failureToError(
    converter.errorToFailure(error, defaultPayloadConverter),
    defaultPayloadConverter,
  );
}

/** What awaiting an activity rejects with in workflow code when the activity failed with `cause`. */
export function activityFailed(cause: Error, activityType = 'createAgentJob'): ActivityFailure {
  const failure = new ActivityFailure(
    'Activity task failed',
    activityType,
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'worker@test',
    cause,
  );
  const delivered = throughTemporal(failure);
  if (!(delivered instanceof ActivityFailure))
    throw new Error(`expected an ActivityFailure, got ${String(delivered)}`);
  return delivered;
}

/** What awaiting an activity rejects with when it got no answer within one of its timeouts. */
export function activityTimedOut(timeoutType: TimeoutType, activityType = 'createAgentJob'): ActivityFailure {
  return activityFailed(new TimeoutFailure('activity timed out', undefined, timeoutType), activityType);
}
