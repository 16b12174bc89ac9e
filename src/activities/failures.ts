import { ApplicationFailure } from '@temporalio/common';
import { DocsApiError, InvalidArgumentError, MalformedResponseError } from '../docs-api/errors';
import type { DocsApiFailureDetails } from '../contract/failure-types';

export interface FailureMappingOptions {
  /** Operator opt-in: treat every transient failure of a non-idempotent call as safe to re-send. */
  retryUnknownOutcome?: boolean;
}

/**
 * Maps a client error to the ApplicationFailure Temporal sees: bad input and 4xx are non-retryable,
 * Retry-After becomes nextRetryDelay, and details say whether the service can have acted.
 */
export function toApplicationFailure(error: unknown, options: FailureMappingOptions = {}): unknown {
  if (!(error instanceof DocsApiError)) return error;
  const retryAfterMs = error.retryAfterMs;
  const field =
    error instanceof InvalidArgumentError || error instanceof MalformedResponseError
      ? error.field
      : undefined;
  const details: DocsApiFailureDetails = {
    operation: error.operation,
    safeToRetry: error.safeToRetry || (error.retryable && options.retryUnknownOutcome === true),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(field === undefined ? {} : { field }),
    ...(error instanceof MalformedResponseError && error.jobId !== undefined ? { jobId: error.jobId } : {}),
  };
  return ApplicationFailure.create({
    message: error.message,
    type: error.name,
    nonRetryable: !error.retryable,
    details: [details],
    ...(retryAfterMs === undefined ? {} : { nextRetryDelay: retryAfterMs }),
  });
}
