import type { IncomingHttpHeaders } from 'node:http';
import { Agent, DecoratorHandler, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { apiDateSchema, checkDateOrder } from '../contract/api-dates';
import type { AgentJob } from '../contract/agent-job';
import { ConfigError } from '../contract/errors';
import { MAX_PAGE_SIZE, visitorsPageSchema, type VisitorsPage } from '../contract/visitors-export';
import {
  InputValidationError,
  intInRange,
  jobIdSchema,
  parseOrThrow,
  projectIdSchema,
  promptSchema,
} from '../contract/validation';
import { ApiKey } from './api-key';
import {
  bodyExcerpt,
  docsApiFailure,
  statusFailure,
  transportFailure,
  type DocsApiOperation,
  type FailureFacts,
} from './failures';
import { answerOf, parseJobAnswer, type AnswerParser } from './schemas';

export interface DocsApiClientOptions {
  /** Base URL of the service, e.g. https://api.example.com (a path prefix is kept). */
  baseUrl: string;
  apiKey: ApiKey | string;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  /** undici interceptors every request goes through, e.g. tracing's and metrics'. */
  interceptors?: Dispatcher.DispatcherComposeInterceptor[];
  /**
   * The longest wait a Retry-After may ask for; a longer (or bogus) one is clamped to it with a warning, so that
   * a broken header cannot stall a job or an export. Default: one hour, the window of the service's budgets.
   */
  maxRetryAfterMs?: number;
}

/** The service's budgets count per hour: no honest Retry-After asks for more. */
const DEFAULT_MAX_RETRY_AFTER_MS = 3_600_000;

export interface RequestOptions {
  /** Aborts the request, e.g. the activity's cancellation signal. */
  signal?: AbortSignal;
  /** Told of each field of a job answer dropped for its unexpected type (the answer itself is still used). */
  onWarning?: (warning: string) => void;
  /** Operator opt-in (DOCS_API_RETRY_UNKNOWN_OUTCOME): a create or message whose outcome is unknown is safe to re-send. */
  retryUnknownOutcome?: boolean;
}

/**
 * Typed client of the documentation service. It never retries: retries belong to Temporal's activity policies, so
 * they never multiply. Every failure is an ApplicationFailure of failures.ts; messages never hold the key.
 */
export class DocsApiClient {
  readonly #apiKey: ApiKey;
  readonly #baseUrl: string;
  readonly #dispatcher: Dispatcher;
  readonly #maxRetryAfterMs: number;

  constructor(options: DocsApiClientOptions) {
    this.#apiKey = typeof options.apiKey === 'string' ? new ApiKey(options.apiKey) : options.apiKey;
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new ConfigError(`DOCS_API_BASE_URL: must be an http or https URL, got protocol ${base.protocol}`);
    }
    this.#baseUrl = base.toString().replace(/\/+$/, '');
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    const agent = new Agent({
      connections: 64,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connect: { timeout: options.timeouts?.connectMs ?? 10_000 },
      headersTimeout: options.timeouts?.headersMs ?? 30_000,
      bodyTimeout: options.timeouts?.bodyMs ?? 30_000,
    });
    this.#dispatcher = agent.compose(...(options.interceptors ?? []));
  }

  /** POST /v2/agent/{projectId}/job. Not idempotent: a failure whose details say safeToRetry false may have created a job. */
  async createJob(
    projectId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const path = jobPath('createJob', projectId);
    const prompt = check(promptSchema, body.prompt, 'prompt', 'createJob');
    return this.#send('createJob', 'POST', path, { prompt }, parseJobAnswer, options);
  }

  /** GET /v2/agent/{projectId}/job/{id}. */
  async getJob(projectId: string, jobId: string, options: RequestOptions = {}): Promise<AgentJob> {
    return this.#send(
      'getJob',
      'GET',
      jobPath('getJob', projectId, jobId),
      undefined,
      parseJobAnswer,
      options,
    );
  }

  /** POST /v2/agent/{projectId}/job/{id}/message. Not idempotent, like createJob. */
  async sendMessage(
    projectId: string,
    jobId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const path = `${jobPath('sendMessage', projectId, jobId)}/message`;
    const prompt = check(promptSchema, body.prompt, 'prompt', 'sendMessage');
    return this.#send('sendMessage', 'POST', path, { prompt }, parseJobAnswer, options);
  }

  /** GET /v1/analytics/{projectId}/visitors: one offset page. */
  async getVisitors(
    projectId: string,
    query: VisitorsQuery,
    options: RequestOptions = {},
  ): Promise<VisitorsPage> {
    const op = 'getVisitors';
    const checked = check(visitorsQuerySchema, query, '', op);
    const params = new URLSearchParams();
    for (const key of ['dateFrom', 'dateTo', 'limit', 'offset'] as const) {
      const value = checked[key];
      if (value !== undefined) params.set(key, String(value));
    }
    const project = encodeURIComponent(check(projectIdSchema, projectId, 'projectId', op));
    const path = `/v1/analytics/${project}/visitors?${params.toString()}`;
    return this.#send(op, 'GET', path, undefined, (json) => visitorsPageSchema.safeParse(json), options);
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  async #send<T>(
    operation: DocsApiOperation,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    parse: AnswerParser<T>,
    options: RequestOptions,
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization: this.#apiKey.authorizationHeader(),
      accept: 'application/json',
      'user-agent': 'docs-agent-worker',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const redact = (text: string) => this.#apiKey.redact(text);
    const facts: FailureFacts = { operation, retryUnknownOutcome: options.retryUnknownOutcome };
    const transport = { ...facts, signal: options.signal, redact };

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
      throw transportFailure(error, { ...transport, responseStarted: false });
    }

    const status = response.statusCode;
    const header = (name: string) => firstHeader(response.headers, [name]);
    const requestId = firstHeader(response.headers, REQUEST_ID_HEADERS);
    let text: string;
    try {
      text = await readText(response.body);
    } catch (error) {
      throw transportFailure(error, { ...transport, responseStarted: true, status, requestId });
    }

    const answered = { ...facts, status, requestId, bodyExcerpt: bodyExcerpt(text, redact) };
    if (status < 200 || status > 299) {
      throw statusFailure({ status, text, header }, answered, {
        redact,
        maxRetryAfterMs: this.#maxRetryAfterMs,
        onWarning: options.onWarning,
      });
    }
    // A job answer that carries an id names a job that exists (after a create too): the caller must not lose it.
    const namesJob = operation !== 'getVisitors';
    return answerOf({ text, contentType: header('content-type') ?? '' }, parse, answered, {
      namesJob,
      onWarning: options.onWarning,
    });
  }
}

const visitorsQuerySchema = z
  .object({
    dateFrom: apiDateSchema.optional(),
    dateTo: apiDateSchema.optional(),
    /** 1..250, default 50 at the service. */
    limit: intInRange(1, MAX_PAGE_SIZE).optional(),
    offset: intInRange(0).optional(),
  })
  .superRefine(checkDateOrder);

export type VisitorsQuery = z.infer<typeof visitorsQuerySchema>;

/** An argument checked before anything is sent: an InvalidArgumentError failure names its field and rule. */
function check<S extends z.ZodType>(
  schema: S,
  value: unknown,
  field: string,
  operation: DocsApiOperation,
): z.output<S> {
  try {
    return parseOrThrow(schema, value, field);
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    const first = { field, rule: 'is invalid', ...error.issues[0] };
    throw docsApiFailure('invalidArgument', `invalid argument ${first.field}: ${first.rule}`, {
      operation,
      field: first.field,
    });
  }
}

/** `/v2/agent/{projectId}/job[/{jobId}]`, each id checked before anything is sent. */
function jobPath(op: DocsApiOperation, projectId: string, jobId?: string): string {
  const project = encodeURIComponent(check(projectIdSchema, projectId, 'projectId', op));
  const job = jobId === undefined ? '' : `/${encodeURIComponent(check(jobIdSchema, jobId, 'jobId', op))}`;
  return `/v2/agent/${project}/job${job}`;
}

/** The largest body read; a larger one fails the call (code BODY_TOO_LARGE) instead of filling the memory. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Headers that carry a request id, by the proxies and services that set them, first found wins. */
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid', 'cf-ray'];

/** The first non-empty value of the first of `names` present. */
function firstHeader(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== '') return first;
  }
  return undefined;
}

/** The whole body as UTF-8 text, at most MAX_BODY_BYTES. */
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

/** What an interceptor of the client (metrics, tracing) is told of one request: its status, then its end, once. */
export interface RequestObserver {
  /** The request to send instead, e.g. with tracing's headers. */
  options?: Dispatcher.DispatchOptions;
  onStatus?: (statusCode: number) => void;
  /** The answer ended, or failed with `error` (before or after its status). */
  onEnd: (error?: Error) => void;
}

/** An undici interceptor that tells the observer `observe` makes for each request how it goes. */
export function observingInterceptor(
  observe: (options: Dispatcher.DispatchOptions) => RequestObserver,
): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const observer = observe(options);
    return dispatch(observer.options ?? options, new ObservingHandler(observer, handler));
  };
}

/**
 * undici's DecoratorHandler forwards the current handler API (and adapts the older one `request()` may pass);
 * its published types still name only the older methods.
 */
const ForwardingHandler = DecoratorHandler as unknown as new (handler: Dispatcher.DispatchHandler) => {
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void;
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void;
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void;
};

class ObservingHandler extends ForwardingHandler {
  #ended = false;

  constructor(
    private readonly observer: RequestObserver,
    handler: Dispatcher.DispatchHandler,
  ) {
    super(handler);
  }

  override onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.observer.onStatus?.(statusCode);
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#end();
    super.onResponseEnd(controller, trailers);
  }

  override onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#end(error);
    super.onResponseError(controller, error);
  }

  #end(error?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.observer.onEnd(error);
  }
}
