/**
 * The failure vocabulary, pure so that workflow code imports it: the types of a call to the documentation service
 * (the `type` of the ApplicationFailure the HTTP client fails with), and of input that breaks a rule.
 */
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

export type DocsApiFailureTypeName = (typeof DocsApiFailureType)[keyof typeof DocsApiFailureType];

const T = DocsApiFailureType;

/**
 * Every way a call fails, the one table: its type; `retryable`, whether the same request may succeed later (else
 * activities fail non-retryable and nobody re-sends it); `mayHaveActed`, whether the service may have acted on it
 * (then a create or message is never sent again, its outcome is unknown).
 */
export const DOCS_API_FAILURES = {
  /** Our own argument broke a rule; nothing was sent. */
  invalidArgument: { type: T.invalidArgument, retryable: false, mayHaveActed: false },
  /** 400, 422, or another 4xx the table does not name. */
  invalidRequest: { type: T.invalidRequest, retryable: false, mayHaveActed: false },
  /** 401 or 403. */
  auth: { type: T.auth, retryable: false, mayHaveActed: false },
  notFound: { type: T.notFound, retryable: false, mayHaveActed: false },
  /** 409: the resource is in a state that refuses the request (a message to a failed job). */
  conflict: { type: T.conflict, retryable: false, mayHaveActed: false },
  /** A 3xx, not followed (a POST would not stay a POST, the key must not travel): the base URL needs changing. */
  redirect: { type: T.redirect, retryable: false, mayHaveActed: false },
  rateLimited: { type: T.rateLimited, retryable: true, mayHaveActed: false },
  /** 503: the service did not act. */
  unavailable: { type: T.server, retryable: true, mayHaveActed: false },
  /** Another 5xx: it may come after the service acted. */
  server: { type: T.server, retryable: true, mayHaveActed: true },
  /** Refused or unresolvable: the request never left. */
  notConnected: { type: T.network, retryable: true, mayHaveActed: false },
  /** Reset, or any other end of a connection that may have carried the request. */
  connectionLost: { type: T.network, retryable: true, mayHaveActed: true },
  /** A connect timeout, or 408 (the service timed out reading the request): not read, so not acted on. */
  notRead: { type: T.timeout, retryable: true, mayHaveActed: false },
  /** No answer in time after the request was sent. */
  noAnswer: { type: T.timeout, retryable: true, mayHaveActed: true },
  /** A 2xx that is not the documented JSON, a body too large, an unexpected status. */
  malformedResponse: { type: T.malformedResponse, retryable: true, mayHaveActed: true },
} as const satisfies Record<
  string,
  { type: DocsApiFailureTypeName; retryable: boolean; mayHaveActed: boolean }
>;

export type DocsApiFailureKind = keyof typeof DOCS_API_FAILURES;

/** What a failure from the documentation service carries in `details[0]`; its `type` says which failure. */
export interface DocsApiFailureDetails {
  operation: string;
  status?: number;
  requestId?: string;
  /** The service cannot have acted on the request (or the operator opted in): a create or message may be re-sent. */
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

/** The failure type of input that breaks a rule, whichever workflow or update refused it. Non-retryable. */
export const INVALID_INPUT_FAILURE_TYPE = 'InvalidInput';

/** One broken rule: the field (dotted path, or the subject for the whole value) and the rule it breaks. */
export interface InputIssue {
  field: string;
  rule: string;
}

/** Thrown (or wrapped in a non-retryable failure) when input breaks a rule; the message names the field. */
export class InputValidationError extends Error {
  override readonly name = 'InputValidationError';
  constructor(
    readonly issues: readonly InputIssue[],
    subject: string,
  ) {
    super(`Invalid ${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
  }
}

/** `text` cut to at most `max` characters, the cut marked by a trailing `…` (pure: workflow code uses it too). */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
