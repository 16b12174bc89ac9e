/**
 * The one vocabulary of failures of a call to the documentation service. Each name is at once the error class's
 * `name` in the HTTP client, the `type` of the ApplicationFailure an activity fails with, and what workflow code
 * compares against. Pure data, so workflow code can import it.
 */
export const DocsApiFailureType = {
  /** Our own argument broke a rule; nothing was sent. */
  invalidArgument: 'InvalidArgumentError',
  /** 400 or 422. */
  invalidRequest: 'InvalidRequestError',
  /** 401 or 403. */
  auth: 'AuthError',
  /** 404. */
  notFound: 'NotFoundError',
  /** 409. */
  conflict: 'ConflictError',
  /** 429. */
  rateLimited: 'RateLimitedError',
  /** 5xx. */
  server: 'ServerError',
  /** Refused, reset or unresolvable connection. */
  network: 'NetworkError',
  /**
   * No answer in time (connect, headers, body), or 408: the service timed out reading the request, so it did not
   * act on it (`safeToRetry`). A 408 is a timeout of the exchange, not a fault of the server: hence not ServerError.
   */
  timeout: 'TimeoutError',
  /** A 2xx that is not the documented JSON. */
  malformedResponse: 'MalformedResponseError',
  /** A 3xx: not followed, so nothing was processed; the base URL needs changing. */
  redirect: 'RedirectError',
} as const;

export type DocsApiFailureTypeName = (typeof DocsApiFailureType)[keyof typeof DocsApiFailureType];

/** Rejections: the same request cannot succeed later, so activities fail non-retryable and nobody re-sends. */
export const REJECTION_FAILURE_TYPES: readonly DocsApiFailureTypeName[] = [
  DocsApiFailureType.invalidArgument,
  DocsApiFailureType.invalidRequest,
  DocsApiFailureType.auth,
  DocsApiFailureType.notFound,
  DocsApiFailureType.conflict,
  DocsApiFailureType.redirect,
];

export function isRejection(type: string | undefined): boolean {
  return (REJECTION_FAILURE_TYPES as readonly (string | undefined)[]).includes(type);
}

/** What an activity failure from the documentation service carries in `details[0]`; its `type` says which failure. */
export interface DocsApiFailureDetails {
  operation: string;
  status?: number;
  requestId?: string;
  /** The service cannot have acted on the request: a non-idempotent call may be sent again. */
  safeToRetry: boolean;
  retryAfterMs?: number;
  field?: string;
  /** A malformed answer that still named a job (its id): the job exists. */
  jobId?: string;
}

/** `details[0]` of an activity failure when it is a DocsApiFailureDetails (it has `safeToRetry`), else undefined. */
export function docsApiDetailsOf(
  details: readonly unknown[] | null | undefined,
): DocsApiFailureDetails | undefined {
  const first = details?.[0];
  if (typeof first !== 'object' || first === null) return undefined;
  return 'safeToRetry' in first && typeof first.safeToRetry === 'boolean'
    ? (first as DocsApiFailureDetails)
    : undefined;
}
