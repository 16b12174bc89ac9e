import { RetryState } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { docsApiDetailsOf } from '../../contract/failure-types';
import { truncate } from '../../contract/text';

/**
 * What a failed create or message means for re-sending it:
 * - resend: the service cannot have acted (connection refused, 429, 503, or the operator opt-in);
 * - rejected: the service (or our own argument check) turned it down for good, nothing happened;
 * - unknown: the request may have been processed (timeout, worker crash mid-request, reset, other 5xx,
 *   malformed 2xx): never re-sent, so the job or message is never duplicated.
 */
export type CallOutcome =
  | { kind: 'resend'; reason: string; retryAfterMs: number | undefined }
  | { kind: 'rejected'; reason: string; failureType: string; status: number | undefined }
  | { kind: 'unknown'; reason: string; jobId?: string };

const REASON_CHARS = 300;

/** Re-sends of a create or message the service cannot have acted on: 1 s, 2 s, 4 s... up to 1 min. */
const RESEND_INITIAL_MS = 1000;
const RESEND_MAX_MS = 60_000;

/** Delay before re-sending a create or message the service cannot have acted on (connection refused, 429, 503). */
export function resendDelayMs(attempt: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined) return Math.max(1, retryAfterMs);
  return Math.min(RESEND_MAX_MS, RESEND_INITIAL_MS * 2 ** attempt);
}

export function classifyCallFailure(error: unknown): CallOutcome {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure) {
    return {
      kind: 'unknown',
      reason: `no answer within the activity's ${cause.timeoutType ?? ''} timeout (the request may have been sent, or the worker stopped mid-request)`,
    };
  }
  if (!(cause instanceof ApplicationFailure)) {
    return { kind: 'unknown', reason: truncate(messageOf(cause), REASON_CHARS) };
  }
  const details = docsApiDetailsOf(cause.details);
  const reason = truncate(cause.message, REASON_CHARS);
  if (cause.nonRetryable) {
    return { kind: 'rejected', reason, failureType: cause.type ?? 'Error', status: details?.status };
  }
  if (details?.safeToRetry === true) return { kind: 'resend', reason, retryAfterMs: details.retryAfterMs };
  return details?.jobId === undefined
    ? { kind: 'unknown', reason }
    : { kind: 'unknown', reason, jobId: details.jobId };
}

/** The failure type an activity failure carries (e.g. NotFoundError), if any. */
export function failureTypeOf(error: unknown): string | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/**
 * The activity ran out of time: a timeout, or retries stopped because the next attempt would pass its
 * schedule-to-close timeout (the server then reports the last attempt's failure with retry state TIMEOUT).
 */
export function isTimeout(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    (error.cause instanceof TimeoutFailure || error.retryState === RetryState.TIMEOUT)
  );
}

export function messageOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return messageOf(error.cause);
  return error instanceof Error ? error.message : String(error);
}
