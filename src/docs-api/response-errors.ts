import { z } from 'zod';
import { truncate } from '../contract/text';
import {
  AuthError,
  ConflictError,
  InvalidRequestError,
  MalformedResponseError,
  NotFoundError,
  RateLimitedError,
  RedirectError,
  ServerError,
  TimeoutError,
  type DocsApiError,
  type DocsApiErrorInit,
} from './errors';
import { firstHeader, type ResponseHeaders } from './http-response';
import { parseRetryAfter } from './retry-after';
import { jobIdText, type ParseOutcome } from './schemas';

const EXCERPT_CHARS = 200;

/** A whole answer of the service: its status, headers and body text. */
export interface ServiceResponse {
  status: number;
  headers: ResponseHeaders;
  text: string;
}

/** How the client reads answers: the key to keep out of messages, the Retry-After cap, where warnings go. */
export interface ResponsePolicy {
  /** Removes the API key from a text. */
  redact: (text: string) => string;
  /** The longest wait a Retry-After may ask for; a longer one is clamped to it, with a warning. */
  maxRetryAfterMs: number;
  onWarning?: ((warning: string) => void) | undefined;
}

/** What every error of one answer shares; `safeToRetry` is the status's to say. */
export type ErrorInitOf = (safeToRetry: boolean) => DocsApiErrorInit;

/** The body as an error's excerpt: whitespace folded, at most 200 characters, the key redacted. */
export function bodyExcerpt(text: string, redact: (text: string) => string): string {
  return redact(truncate(text.replace(/\s+/g, ' ').trim(), EXCERPT_CHARS));
}

/**
 * The DocsApiError of a non-2xx answer, one class per status family (as openai-node's `APIError.generate`):
 * the service's message from the body, the Retry-After of a 429 or 5xx (clamped), the key never in it.
 */
export function errorFromStatus(
  response: ServiceResponse,
  init: ErrorInitOf,
  policy: ResponsePolicy,
): DocsApiError {
  const { status, headers, text } = response;
  const asked = parseRetryAfter(firstHeader(headers, ['retry-after']));
  const retryAfterMs = asked === undefined ? undefined : Math.min(asked, policy.maxRetryAfterMs);
  const clamped =
    asked !== undefined && asked > policy.maxRetryAfterMs
      ? `Retry-After asked for ${Math.round(asked / 1000)}s, clamped to ${policy.maxRetryAfterMs / 1000}s`
      : undefined;
  if (clamped !== undefined) policy.onWarning?.(clamped);
  const detail =
    policy.redact(serviceMessage(text) ?? `HTTP ${status}`) + (clamped === undefined ? '' : ` (${clamped})`);
  if (status === 400 || status === 422)
    return new InvalidRequestError(`invalid request: ${detail}`, init(true));
  if (status === 401) return new AuthError(`not authorized: ${detail}`, init(true));
  if (status === 403) {
    return new AuthError(
      `forbidden: the key is not allowed this operation (a read-only key, or one restricted to other IP addresses): ${detail}`,
      init(true),
    );
  }
  if (status === 404) return new NotFoundError(`not found: ${detail}`, init(true));
  if (status === 409) return new ConflictError(`conflict: ${detail}`, init(true));
  if (status === 429) return new RateLimitedError(`rate limited: ${detail}`, { ...init(true), retryAfterMs });
  if (status === 408) {
    return new TimeoutError(`the service timed out reading the request: ${detail}`, init(true));
  }
  if (status >= 500)
    return new ServerError(`server error: ${detail}`, { ...init(status === 503), retryAfterMs });
  if (status >= 400) return new InvalidRequestError(`request refused: ${detail}`, init(true));
  if (status >= 300 && status < 400) {
    const location = policy.redact(firstHeader(headers, ['location']) ?? '(no Location header)');
    // Not followed: a POST would not be re-sent as a POST, and the key must not travel to another origin.
    return new RedirectError(
      `redirected to ${location}, not followed and not processed: set DOCS_API_BASE_URL to the address it names`,
      init(true),
      location,
    );
  }
  return new MalformedResponseError(`unexpected HTTP status ${status}`, init(false), 'status');
}

/**
 * The parsed body of a 2xx answer, or a MalformedResponseError. A 2xx means the service acted: a malformed answer
 * to a create or message leaves its outcome unknown. So the body is read whatever the content type says, a JSON
 * body is used, and a job answer that fails its schema but names a job keeps that id (`namesJob`).
 */
export function answerOf<T>(
  response: ServiceResponse,
  parse: (json: unknown) => ParseOutcome<T>,
  init: ErrorInitOf,
  options: { namesJob: boolean; onWarning?: ((warning: string) => void) | undefined },
): T {
  const contentType = firstHeader(response.headers, ['content-type']) ?? '';
  const typedJson = /[/+]json\b/i.test(contentType);
  let json: unknown;
  try {
    json = JSON.parse(response.text);
  } catch {
    if (!typedJson) {
      throw new MalformedResponseError(
        `expected a JSON response, got content-type "${contentType || 'none'}"`,
        init(false),
        'content-type',
      );
    }
    throw new MalformedResponseError('response body is not valid JSON', init(false), 'body');
  }
  if (!typedJson) {
    options.onWarning?.(`response content-type "${contentType || 'none'}": the body was read as JSON`);
  }
  const parsed = parse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  const jobId = options.namesJob ? answeredJobId(json) : undefined;
  throw new MalformedResponseError(
    `response field ${field}: ${issue?.message ?? 'does not match the schema'}` +
      (jobId === undefined ? '' : ` (the answer names job ${jobId})`),
    init(false),
    field,
    jobId,
  );
}

/** The `id` of a job answer that failed its schema, when it is a usable one (a numeric id as its digits). */
function answeredJobId(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || !('id' in json)) return undefined;
  const id = jobIdText(json.id);
  return id !== undefined && id.length <= 256 ? id : undefined;
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
