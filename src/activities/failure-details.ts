/**
 * What an activity failure from the documentation service carries in `details[0]`, so that workflow
 * code (which cannot import the HTTP client) can decide: the failure `type` is the error class name.
 */
export interface DocsApiFailureDetails {
  kind: string;
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

/** Failure types a non-idempotent call (create, message) may retry because the service did not act. */
export const DocsApiFailureType = {
  invalidArgument: 'InvalidArgumentError',
  invalidRequest: 'InvalidRequestError',
  auth: 'AuthError',
  notFound: 'NotFoundError',
  conflict: 'ConflictError',
  rateLimited: 'RateLimitedError',
  server: 'ServerError',
  network: 'NetworkError',
  timeout: 'TimeoutError',
  malformedResponse: 'MalformedResponseError',
  redirect: 'RedirectError',
} as const;
