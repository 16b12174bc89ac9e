import { DocsApiFailureType, isRejection, type DocsApiFailureTypeName } from '../contract/failure-types';

export type DocsApiOperation = 'createJob' | 'getJob' | 'sendMessage' | 'getVisitors';

export interface DocsApiErrorInit {
  operation: DocsApiOperation;
  status?: number;
  requestId?: string;
  bodyExcerpt?: string;
  /** True when the service cannot have acted on the request, so even a non-idempotent call may be re-sent. */
  safeToRetry: boolean;
  /** From Retry-After (seconds or an HTTP date), when the service sent one with a 429 or 5xx. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/** Base class of every error the client throws. Messages never contain the API key. */
export abstract class DocsApiError extends Error {
  abstract override readonly name: DocsApiFailureTypeName;
  readonly operation: DocsApiOperation;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly safeToRetry: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, init: DocsApiErrorInit) {
    super(describe(message, init), init.cause === undefined ? undefined : { cause: init.cause });
    this.operation = init.operation;
    this.status = init.status;
    this.requestId = init.requestId;
    this.bodyExcerpt = init.bodyExcerpt;
    this.safeToRetry = init.safeToRetry;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** Whether the same request may succeed later (transient), regardless of idempotency. */
  get retryable(): boolean {
    return !isRejection(this.name);
  }
}

/** A DocsApiError named by its failure type; subclasses add the facts of their own. */
function failureOfType<N extends DocsApiFailureTypeName>(type: N) {
  return class extends DocsApiError {
    override readonly name: N = type;
  };
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
  override readonly name = DocsApiFailureType.invalidArgument;
  constructor(
    readonly field: string,
    readonly rule: string,
    operation: DocsApiOperation,
  ) {
    super(`invalid argument ${field}: ${rule}`, { operation, safeToRetry: true });
  }
}

/** 400 or 422: the service rejected the request as invalid. */
export class InvalidRequestError extends failureOfType(DocsApiFailureType.invalidRequest) {}

/** 401 or 403: the key is missing, wrong, or not allowed for the project. */
export class AuthError extends failureOfType(DocsApiFailureType.auth) {}

export class NotFoundError extends failureOfType(DocsApiFailureType.notFound) {}

/** 409: the resource is in a state that refuses the request (for example a message to a failed job). */
export class ConflictError extends failureOfType(DocsApiFailureType.conflict) {}

/** 429: rate limited; `retryAfterMs` when the service said when to come back. */
export class RateLimitedError extends failureOfType(DocsApiFailureType.rateLimited) {}

/** 5xx. 503 means the service did not act; other 5xx may come after it acted. */
export class ServerError extends failureOfType(DocsApiFailureType.server) {}

/** The connection failed (refused, reset, DNS). `safeToRetry` tells whether the request can have reached the service. */
export class NetworkError extends failureOfType(DocsApiFailureType.network) {
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly code: string | undefined,
  ) {
    super(message, init);
  }
}

/** No answer in time (connect, headers or body timeout), or 408: the service timed out reading the request. */
export class TimeoutError extends failureOfType(DocsApiFailureType.timeout) {}

/** A 2xx answer that is not the documented JSON: wrong content type, not JSON, or a field that fails the schema. */
export class MalformedResponseError extends failureOfType(DocsApiFailureType.malformedResponse) {
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
export class RedirectError extends failureOfType(DocsApiFailureType.redirect) {
  constructor(
    message: string,
    init: DocsApiErrorInit,
    readonly location: string,
  ) {
    super(message, init);
  }
}
