import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  DOCS_API_FAILURES,
  truncate,
  type DocsApiFailureDetails,
  type DocsApiFailureKind,
} from '../contract/failure-types';

export const DOCS_API_OPERATIONS = ['createJob', 'getJob', 'sendMessage', 'getVisitors'] as const;
export type DocsApiOperation = (typeof DOCS_API_OPERATIONS)[number];

/** The facts of one failed call, beside its kind: its details but `safeToRetry`, which the kind decides. */
export type FailureFacts = {
  [K in Exclude<keyof DocsApiFailureDetails, 'operation' | 'safeToRetry'>]?:
    DocsApiFailureDetails[K] | undefined;
} & {
  operation: DocsApiOperation;
  bodyExcerpt?: string | undefined;
  /** Operator opt-in: a retryable failure of a create or message is re-sent even when the service may have acted. */
  retryUnknownOutcome?: boolean | undefined;
};

/**
 * The one shape of every failure of the client: an ApplicationFailure whose type, retryability and `safeToRetry`
 * come from DOCS_API_FAILURES, Retry-After as its next retry delay. Messages never hold the key.
 */
export function docsApiFailure(
  kind: DocsApiFailureKind,
  message: string,
  facts: FailureFacts,
): ApplicationFailure {
  const { type, retryable, mayHaveActed } = DOCS_API_FAILURES[kind];
  const { bodyExcerpt, retryUnknownOutcome, ...rest } = facts;
  const details = {
    ...Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)),
    safeToRetry: !mayHaveActed || (retryable && retryUnknownOutcome === true),
  } as DocsApiFailureDetails;
  const parts = [`${facts.operation}: ${message}`];
  if (facts.status !== undefined) parts.push(`HTTP ${facts.status}`);
  if (facts.requestId !== undefined) parts.push(`request id ${facts.requestId}`);
  if (bodyExcerpt) parts.push(`body: ${bodyExcerpt}`);
  return ApplicationFailure.create({
    type,
    message: parts.join(' | '),
    nonRetryable: !retryable,
    details: [details],
    ...(facts.retryAfterMs === undefined ? {} : { nextRetryDelay: facts.retryAfterMs }),
  });
}

const EXCERPT_CHARS = 200;

/** The body as a failure's excerpt: whitespace folded, at most 200 characters, the key redacted. */
export function bodyExcerpt(text: string, redact: (text: string) => string): string {
  return redact(truncate(text.replace(/\s+/g, ' ').trim(), EXCERPT_CHARS));
}

/** The service's budgets count per hour: no honest Retry-After asks for more. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** The failure of each status the service documents, and how its message begins. */
const STATUS_FAILURES: Record<number, [DocsApiFailureKind, string]> = {
  400: ['invalidRequest', 'invalid request'],
  422: ['invalidRequest', 'invalid request'],
  401: ['auth', 'not authorized'],
  403: [
    'auth',
    'forbidden: the key is not allowed this operation (a read-only key, or one restricted to other IP addresses)',
  ],
  404: ['notFound', 'not found'],
  408: ['notRead', 'the service timed out reading the request'],
  409: ['conflict', 'conflict'],
  429: ['rateLimited', 'rate limited'],
  503: ['unavailable', 'server error'],
};

/**
 * A non-2xx answer: its kind by status, the service's message from the body (the key redacted), a Retry-After of
 * a 429 or 5xx (a longer one than MAX_RETRY_AFTER_MS is clamped to it, with a warning).
 */
export function statusFailure(
  answer: { status: number; text: string; header: (name: string) => string | undefined },
  facts: FailureFacts,
  policy: { redact: (text: string) => string; onWarning?: ((warning: string) => void) | undefined },
): ApplicationFailure {
  const { status } = answer;
  if (status >= 300 && status < 400) {
    const location = policy.redact(answer.header('location') ?? '(no Location header)');
    return docsApiFailure(
      'redirect',
      `redirected to ${location}, not followed and not processed: set DOCS_API_BASE_URL to the address it names`,
      facts,
    );
  }
  if (status < 400) {
    return docsApiFailure('malformedResponse', `unexpected HTTP status ${status}`, {
      ...facts,
      field: 'status',
    });
  }
  const [kind, what] =
    STATUS_FAILURES[status] ??
    (status >= 500 ? ['server', 'server error'] : ['invalidRequest', 'request refused']);
  const asked = status === 429 || status >= 500 ? parseRetryAfter(answer.header('retry-after')) : undefined;
  let detail = policy.redact(serviceMessage(answer.text) ?? `HTTP ${status}`);
  if (asked !== undefined && asked > MAX_RETRY_AFTER_MS) {
    const clamped = `Retry-After asked for ${Math.round(asked / 1000)}s, clamped to ${MAX_RETRY_AFTER_MS / 1000}s`;
    policy.onWarning?.(clamped);
    detail += ` (${clamped})`;
  }
  return docsApiFailure(kind, `${what}: ${detail}`, {
    ...facts,
    ...(asked === undefined ? {} : { retryAfterMs: Math.min(asked, MAX_RETRY_AFTER_MS) }),
  });
}

/** Connection failures that happen before a request can reach the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * A call that got no whole answer: a timeout, a failed connection, a body too large. The caller's own abort is
 * passed through as its reason. A `status` in the facts: the response had begun, so the service got the request.
 */
export function transportFailure(
  error: unknown,
  facts: FailureFacts,
  { signal, redact }: { signal: AbortSignal | undefined; redact: (text: string) => string },
): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  const code = errorCode(error);
  const message = redact(error instanceof Error ? error.message : String(error));
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return docsApiFailure('notRead', `connect timeout: ${message}`, facts);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return docsApiFailure('noAnswer', `no answer in time: ${message}`, facts);
  }
  if (code === 'BODY_TOO_LARGE')
    return docsApiFailure('malformedResponse', message, { ...facts, field: 'body' });
  const notSent = facts.status === undefined && code !== undefined && NOT_SENT_CODES.has(code);
  return docsApiFailure(
    notSent ? 'notConnected' : 'connectionLost',
    `connection failed (${code ?? 'unknown'}): ${message}`,
    facts,
  );
}

/** The most telling error code along the cause chain (undici wraps socket errors). */
export function errorCode(error: unknown): string | undefined {
  const codes: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = 'code' in current ? current.code : undefined;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return (
    codes.find((code) => NOT_SENT_CODES.has(code)) ??
    codes.find((code) => code !== 'UND_ERR_SOCKET') ??
    codes[0]
  );
}

/** Parses a Retry-After header (delay in seconds, or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its month; without this, Date.parse would read "-5" as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The message an error body carries: the service's `{ "error": "<message>" }` with analytics'
 * `details: [{ "message" }]`, or the common shapes `{ error: { message } }` and `{ message }`.
 */
export function serviceMessage(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the excerpt carries the body
  }
  const body = errorBodySchema.safeParse(json);
  if (!body.success) return undefined;
  const { error, message, details } = body.data;
  const main = typeof error === 'object' ? error.message : (error ?? message);
  if (main === undefined) return undefined;
  const detail = (details ?? []).flatMap((d) => (d === undefined || d.message === main ? [] : [d.message]));
  return (detail.length === 0 ? main : `${main} (${detail.join('; ')})`).slice(0, EXCERPT_CHARS);
}

const errorMessageSchema = z.string().min(1);
/** Error bodies: each part is optional, and an odd part is ignored rather than hiding the rest. */
const errorBodySchema = z.object({
  error: z
    .union([errorMessageSchema, z.object({ message: errorMessageSchema })])
    .optional()
    .catch(undefined),
  message: errorMessageSchema.optional().catch(undefined),
  details: z
    .array(z.object({ message: errorMessageSchema }).optional().catch(undefined))
    .optional()
    .catch(undefined),
});
