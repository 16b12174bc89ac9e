export type DocsApiOperation = 'createJob' | 'getJob' | 'sendMessage' | 'getVisitors';

export type DocsApiErrorKind =
  | 'invalid_argument'
  | 'invalid_request'
  | 'auth'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'server'
  | 'network'
  | 'timeout'
  | 'malformed_response'
  | 'redirect';

export interface DocsApiErrorInit {
  operation: DocsApiOperation;
  status?: number;
  requestId?: string;
  bodyExcerpt?: string;
  /** True when the service cannot have acted on the request, so even a non-idempotent call may be re-sent. */
  safeToRetry: boolean;
  cause?: unknown;
}

/** Base class of every error the client throws. Messages never contain the API key. */
export abstract class DocsApiError extends Error {
  abstract readonly kind: DocsApiErrorKind;
  /** Whether the same request may succeed later (transient), regardless of idempotency. */
  abstract readonly retryable: boolean;
  readonly operation: DocsApiOperation;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly safeToRetry: boolean;

  constructor(message: string, init: DocsApiErrorInit) {
    super(describe(message, init), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.operation = init.operation;
    this.status = init.status;
    this.requestId = init.requestId;
    this.bodyExcerpt = init.bodyExcerpt;
    this.safeToRetry = init.safeToRetry;
  }
}

function describe(message: string, init: DocsApiErrorInit): string {
  const parts = [`${init.operation}: ${message}`];
  if (init.status !== undefined) parts.push(`HTTP ${init.status}`);
  if (init.requestId !== undefined) parts.push(`request id ${init.requestId}`);
  if (init.bodyExcerpt) parts.push(`body: ${init.bodyExcerpt}`);
  return parts.join(' | ');
}

/** Our own argument broke a rule; nothing was sent. */
export class InvalidArgumentError extends DocsApiError {
  readonly kind = 'invalid_argument';
  readonly retryable = false;
  constructor(
    readonly field: string,
    readonly rule: string,
    operation: DocsApiOperation,
  ) {
    super(`invalid argument ${field}: ${rule}`, { operation, safeToRetry: true });
  }
}

/** 400 or 422: the service rejected the request as invalid. */
export class InvalidRequestError extends DocsApiError {
  readonly kind = 'invalid_request';
  readonly retryable = false;
}

/** 401 or 403: the key is missing, wrong, or not allowed for the project. */
export class AuthError extends DocsApiError {
  readonly kind = 'auth';
  readonly retryable = false;
}

export class NotFoundError extends DocsApiError {
  readonly kind = 'not_found';
  readonly retryable = false;
}

/** 409: the resource is in a state that refuses the request (for example a message to a failed job). */
export class ConflictError extends DocsApiError {
  readonly kind = 'conflict';
  readonly retryable = false;
}

/** 429: rate limited. `retryAfterMs` comes from Retry-After when the service sent one. */
export class RateLimitedError extends DocsApiError {
  readonly kind = 'rate_limited';
  readonly retryable = true;
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, init);
  }
}

/** 408 or 5xx. 503 means the service did not act; other 5xx may come after it acted. */
export class ServerError extends DocsApiError {
  readonly kind = 'server';
  readonly retryable = true;
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, init);
  }
}

/** The connection failed (refused, reset, DNS). `safeToRetry` tells whether the request can have reached the service. */
export class NetworkError extends DocsApiError {
  readonly kind = 'network';
  readonly retryable = true;
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly code: string | undefined,
  ) {
    super(message, init);
  }
}

/** No answer in time (connect, headers or body timeout, or the caller's signal). */
export class TimeoutError extends DocsApiError {
  readonly kind = 'timeout';
  readonly retryable = true;
}

/** A 2xx answer that is not the documented JSON: wrong content type, not JSON, or a field that fails the schema. */
export class MalformedResponseError extends DocsApiError {
  readonly kind = 'malformed_response';
  readonly retryable = true;
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly field: string | undefined,
    /** The job the answer names, when it carried a usable `id`: a create that answered so did create it. */
    readonly jobId?: string,
  ) {
    super(message, init);
  }
}

/** A 3xx: the request was not processed, and is not followed (DOCS_API_BASE_URL must name the final address). */
export class RedirectError extends DocsApiError {
  readonly kind = 'redirect';
  readonly retryable = false;
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly location: string,
  ) {
    super(message, init);
  }
}
