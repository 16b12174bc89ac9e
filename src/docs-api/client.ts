import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import type { AgentJob } from '../contract/agent-job';
import { visitorsPageSchema, type VisitorsPage } from '../contract/visitors-export';
import { ApiKey } from './api-key';
import { checkJobId, checkProjectId, checkPrompt, checkVisitorsQuery, type VisitorsQuery } from './arguments';
import {
  AuthError,
  ConflictError,
  InvalidRequestError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RedirectError,
  ServerError,
  TimeoutError,
  type DocsApiError,
  type DocsApiErrorInit,
  type DocsApiOperation,
} from './errors';
import { parseRetryAfter } from './retry-after';
import { jobIdText, parseJobAnswer, type Lenient, type ParseOutcome } from './schemas';

export interface DocsApiClientOptions {
  /** Base URL of the service, e.g. https://api.example.com (a path prefix is kept). */
  baseUrl: string;
  apiKey: ApiKey | string;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  /** Connections kept per origin; default 64. */
  connections?: number;
  userAgent?: string;
  /** Injected dispatcher (tests); the client then does not own or close it. */
  dispatcher?: Dispatcher;
  /**
   * The longest wait a Retry-After may ask for; a longer (or bogus) one is clamped to it with a warning, so that
   * a broken header cannot stall a job or an export. Default: one hour, the window of the service's budgets.
   */
  maxRetryAfterMs?: number;
}

/** The service's budgets count per hour: no honest Retry-After asks for more. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 3_600_000;

export interface RequestOptions {
  /** Aborts the request, e.g. the activity's cancellation signal. */
  signal?: AbortSignal;
  /** Told of each field of a job answer dropped for its unexpected type (the answer itself is still used). */
  onWarning?: (warning: string) => void;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const EXCERPT_CHARS = 200;
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid', 'cf-ray'];
/** Connection failures that happen before a request can reach the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Typed client of the documentation service. It never retries: retries belong to Temporal's activity
 * policies, so they never multiply. Every failure is a DocsApiError subclass; messages never hold the key.
 */
export class DocsApiClient {
  readonly #apiKey: ApiKey;
  readonly #baseUrl: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #userAgent: string;
  readonly #maxRetryAfterMs: number;

  constructor(options: DocsApiClientOptions) {
    this.#apiKey = typeof options.apiKey === 'string' ? new ApiKey(options.apiKey) : options.apiKey;
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new Error(`DOCS_API_BASE_URL: must be an http or https URL, got protocol ${base.protocol}`);
    }
    this.#baseUrl = base.toString().replace(/\/+$/, '');
    this.#userAgent = options.userAgent ?? 'docs-agent-worker';
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connections: options.connections ?? 64,
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
        connect: { timeout: options.timeouts?.connectMs ?? 10_000 },
        headersTimeout: options.timeouts?.headersMs ?? 30_000,
        bodyTimeout: options.timeouts?.bodyMs ?? 30_000,
      });
  }

  /** POST /v2/agent/{projectId}/job. Not idempotent: a failure with safeToRetry false may have created a job. */
  async createJob(
    projectId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const op = 'createJob';
    const path = `/v2/agent/${enc(checkProjectId(projectId, op))}/job`;
    const prompt = checkPrompt(body.prompt, op);
    return withWarnings(await this.#send(op, 'POST', path, { prompt }, parseJobAnswer, options), options);
  }

  /** GET /v2/agent/{projectId}/job/{id}. */
  async getJob(projectId: string, jobId: string, options: RequestOptions = {}): Promise<AgentJob> {
    const op = 'getJob';
    const path = `/v2/agent/${enc(checkProjectId(projectId, op))}/job/${enc(checkJobId(jobId, op))}`;
    return withWarnings(await this.#send(op, 'GET', path, undefined, parseJobAnswer, options), options);
  }

  /** POST /v2/agent/{projectId}/job/{id}/message. Not idempotent, like createJob. */
  async sendMessage(
    projectId: string,
    jobId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const op = 'sendMessage';
    const path = `/v2/agent/${enc(checkProjectId(projectId, op))}/job/${enc(checkJobId(jobId, op))}/message`;
    const prompt = checkPrompt(body.prompt, op);
    return withWarnings(await this.#send(op, 'POST', path, { prompt }, parseJobAnswer, options), options);
  }

  /** GET /v1/analytics/{projectId}/visitors: one offset page. */
  async getVisitors(
    projectId: string,
    query: VisitorsQuery,
    options: RequestOptions = {},
  ): Promise<VisitorsPage> {
    const op = 'getVisitors';
    const checked = checkVisitorsQuery(query);
    const params = new URLSearchParams();
    for (const key of ['dateFrom', 'dateTo', 'limit', 'offset'] as const) {
      const value = checked[key];
      if (value !== undefined) params.set(key, String(value));
    }
    const path = `/v1/analytics/${enc(checkProjectId(projectId, op))}/visitors?${params.toString()}`;
    return this.#send(op, 'GET', path, undefined, (json) => visitorsPageSchema.safeParse(json), options);
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #send<T>(
    operation: DocsApiOperation,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    parse: (json: unknown) => ParseOutcome<T>,
    options: RequestOptions,
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization: this.#apiKey.authorizationHeader(),
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';

    let response: Dispatcher.ResponseData;
    try {
      response = await request(this.#baseUrl + path, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        dispatcher: this.#dispatcher,
        signal: options.signal,
      });
    } catch (error) {
      throw this.#transportError(operation, error, options.signal, false);
    }

    const requestId = firstHeader(response.headers, REQUEST_ID_HEADERS);
    let text: string;
    try {
      text = await readText(response.body);
    } catch (error) {
      throw this.#transportError(operation, error, options.signal, true, response.statusCode, requestId);
    }

    const init = (safeToRetry: boolean): DocsApiErrorInit => ({
      operation,
      status: response.statusCode,
      safeToRetry,
      bodyExcerpt: this.#excerpt(text),
      ...(requestId === undefined ? {} : { requestId }),
    });

    if (response.statusCode < 200 || response.statusCode > 299) {
      throw this.#statusError(response.statusCode, response.headers, text, init, options);
    }

    // A 2xx means the service acted: a malformed answer to a create or message leaves its outcome unknown. So
    // the body is read whatever the content type says, and a JSON body is used (a created job's id is kept).
    const contentType = firstHeader(response.headers, ['content-type']) ?? '';
    const typedJson = /[/+]json\b/i.test(contentType);
    let json: unknown;
    try {
      json = JSON.parse(text);
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
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      // A job answer that carries an id names a job that exists (after a create too): the caller must not lose it.
      const jobId = operation === 'getVisitors' ? undefined : answeredJobId(json);
      throw new MalformedResponseError(
        `response field ${field}: ${issue?.message ?? 'does not match the schema'}` +
          (jobId === undefined ? '' : ` (the answer names job ${jobId})`),
        init(false),
        field,
        jobId,
      );
    }
    return parsed.data;
  }

  #statusError(
    status: number,
    headers: Dispatcher.ResponseData['headers'],
    text: string,
    init: (safeToRetry: boolean) => DocsApiErrorInit,
    options: RequestOptions,
  ): DocsApiError {
    const asked = parseRetryAfter(firstHeader(headers, ['retry-after']));
    const retryAfterMs = asked === undefined ? undefined : Math.min(asked, this.#maxRetryAfterMs);
    const clamped =
      asked !== undefined && asked > this.#maxRetryAfterMs
        ? `Retry-After asked for ${Math.round(asked / 1000)}s, clamped to ${this.#maxRetryAfterMs / 1000}s`
        : undefined;
    if (clamped !== undefined) options.onWarning?.(clamped);
    const detail =
      this.#redact(serviceMessage(text) ?? `HTTP ${status}`) + (clamped === undefined ? '' : ` (${clamped})`);
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
    if (status === 429)
      return new RateLimitedError(`rate limited: ${detail}`, { ...init(true), retryAfterMs });
    if (status === 408)
      return new TimeoutError(`the service timed out reading the request: ${detail}`, init(true));
    if (status >= 500)
      return new ServerError(`server error: ${detail}`, { ...init(status === 503), retryAfterMs });
    if (status >= 400) return new InvalidRequestError(`request refused: ${detail}`, init(true));
    if (status >= 300 && status < 400) {
      const location = this.#redact(firstHeader(headers, ['location']) ?? '(no Location header)');
      // Not followed: a POST would not be re-sent as a POST, and the key must not travel to another origin.
      return new RedirectError(
        `redirected to ${location}, not followed and not processed: set DOCS_API_BASE_URL to the address it names`,
        init(true),
        location,
      );
    }
    return new MalformedResponseError(`unexpected HTTP status ${status}`, init(false), 'status');
  }

  #transportError(
    operation: DocsApiOperation,
    error: unknown,
    signal: AbortSignal | undefined,
    responseStarted: boolean,
    status?: number,
    requestId?: string,
  ): unknown {
    if (signal?.aborted) return signal.reason ?? error;
    const code = errorCode(error);
    const base = {
      operation,
      ...(status === undefined ? {} : { status }),
      ...(requestId === undefined ? {} : { requestId }),
      cause: error,
    };
    const message = this.#redact(error instanceof Error ? error.message : String(error));
    if (error instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new TimeoutError(`connect timeout: ${message}`, { ...base, safeToRetry: true });
    }
    if (
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT'
    ) {
      return new TimeoutError(`no answer in time: ${message}`, { ...base, safeToRetry: false });
    }
    if (code === 'BODY_TOO_LARGE') {
      return new MalformedResponseError(message, { ...base, safeToRetry: false }, 'body');
    }
    const notSent = !responseStarted && code !== undefined && NOT_SENT_CODES.has(code);
    return new NetworkError(
      `connection failed (${code ?? 'unknown'}): ${message}`,
      { ...base, safeToRetry: notSent },
      code,
    );
  }

  #excerpt(text: string): string {
    const flat = text.replace(/\s+/g, ' ').trim();
    return this.#redact(flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat);
  }

  #redact(text: string): string {
    return this.#apiKey.redact(text);
  }
}

function withWarnings(answer: Lenient<AgentJob>, options: RequestOptions): AgentJob {
  for (const warning of answer.warnings) options.onWarning?.(warning);
  return answer.value;
}

/** The `id` of a job answer that failed its schema, when it is a usable one (a numeric id as its digits). */
function answeredJobId(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || !('id' in json)) return undefined;
  const id = jobIdText(json.id);
  return id !== undefined && id.length <= 256 ? id : undefined;
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function firstHeader(headers: Dispatcher.ResponseData['headers'], names: string[]): string | undefined {
  for (const name of names) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== '') return first;
  }
  return undefined;
}

/** The most telling error code along the cause chain (undici wraps socket errors). */
function errorCode(error: unknown): string | undefined {
  const codes: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return (
    codes.find((code) => NOT_SENT_CODES.has(code)) ??
    codes.find((code) => code !== 'UND_ERR_SOCKET') ??
    codes[0]
  );
}

/**
 * The message an error body carries: the service's `{ "error": "<message>" }` with analytics'
 * `details: [{ "message" }]`, or the common shapes `{ error: { message } }` and `{ message }`.
 */
function serviceMessage(text: string): string | undefined {
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

async function readText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      throw Object.assign(new Error(`response body larger than ${MAX_BODY_BYTES} bytes`), {
        code: 'BODY_TOO_LARGE',
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
