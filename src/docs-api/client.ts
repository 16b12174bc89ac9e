import { Agent, request, type Dispatcher } from 'undici';
import type { AgentJob } from '../contract/agent-job';
import { ConfigError } from '../contract/errors';
import { visitorsPageSchema, type VisitorsPage } from '../contract/visitors-export';
import { ApiKey } from './api-key';
import { checkJobId, checkProjectId, checkPrompt, checkVisitorsQuery, type VisitorsQuery } from './arguments';
import { type DocsApiErrorInit, type DocsApiOperation } from './errors';
import { firstHeader, readText, REQUEST_ID_HEADERS } from './http-response';
import { answerOf, bodyExcerpt, errorFromStatus } from './response-errors';
import { parseJobAnswer, type Lenient, type ParseOutcome } from './schemas';
import { errorFromTransport } from './transport-errors';

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
  /** undici interceptors every request goes through, e.g. tracing's (src/tracing/docs-api-spans.ts). */
  interceptors?: Dispatcher.DispatcherComposeInterceptor[];
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
      throw new ConfigError(`DOCS_API_BASE_URL: must be an http or https URL, got protocol ${base.protocol}`);
    }
    this.#baseUrl = base.toString().replace(/\/+$/, '');
    this.#userAgent = options.userAgent ?? 'docs-agent-worker';
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.#ownsDispatcher = options.dispatcher === undefined;
    const dispatcher =
      options.dispatcher ??
      new Agent({
        connections: options.connections ?? 64,
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
        connect: { timeout: options.timeouts?.connectMs ?? 10_000 },
        headersTimeout: options.timeouts?.headersMs ?? 30_000,
        bodyTimeout: options.timeouts?.bodyMs ?? 30_000,
      });
    const interceptors = options.interceptors ?? [];
    this.#dispatcher = interceptors.length > 0 ? dispatcher.compose(...interceptors) : dispatcher;
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
    const redact = (text: string) => this.#apiKey.redact(text);
    const transport = { operation, signal: options.signal, redact };

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
      throw errorFromTransport({ ...transport, error, responseStarted: false });
    }

    const status = response.statusCode;
    const requestId = firstHeader(response.headers, REQUEST_ID_HEADERS);
    let text: string;
    try {
      text = await readText(response.body);
    } catch (error) {
      throw errorFromTransport({ ...transport, error, responseStarted: true, status, requestId });
    }

    const answer = { status, headers: response.headers, text };
    const init = (safeToRetry: boolean): DocsApiErrorInit => ({
      operation,
      status,
      safeToRetry,
      bodyExcerpt: bodyExcerpt(text, redact),
      ...(requestId === undefined ? {} : { requestId }),
    });
    if (status < 200 || status > 299) {
      throw errorFromStatus(answer, init, {
        redact,
        maxRetryAfterMs: this.#maxRetryAfterMs,
        onWarning: options.onWarning,
      });
    }
    // A job answer that carries an id names a job that exists (after a create too): the caller must not lose it.
    const namesJob = operation !== 'getVisitors';
    return answerOf(answer, parse, init, { namesJob, onWarning: options.onWarning });
  }
}

function withWarnings(answer: Lenient<AgentJob>, options: RequestOptions): AgentJob {
  for (const warning of answer.warnings) options.onWarning?.(warning);
  return answer.value;
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}
