import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { Agent, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { apiDateSchema, checkDateOrder } from '../contract/api-dates';
import type { AgentJob } from '../contract/agent-job';
import { MAX_PAGE_SIZE, visitorsPageSchema, type VisitorsPage } from '../contract/visitors-export';
import { intInRange, jobIdSchema, projectIdSchema, promptSchema } from '../contract/validation';
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
  /** Base URL of the service, e.g. https://api.example.com (a path prefix is kept); config.ts checks it. */
  baseUrl: string;
  apiKey: ApiKey | string;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  /** Told of each request once it ended: its answer's status (none: no answer), whether the caller aborted it. */
  onRequestEnd?: (request: RequestEnd) => void;
}

export interface RequestEnd {
  operation: DocsApiOperation;
  status: number | undefined;
  aborted: boolean;
  seconds: number;
}

export interface RequestOptions {
  /** Aborts the request, e.g. the activity's cancellation signal. */
  signal?: AbortSignal;
  /** Told of each field of a job answer dropped for its unexpected type (the answer itself is still used). */
  onWarning?: (warning: string) => void;
  /** Operator opt-in (DOCS_API_RETRY_UNKNOWN_OUTCOME): a create or message whose outcome is unknown is safe to re-send. */
  retryUnknownOutcome?: boolean;
}

const tracer = trace.getTracer('docs-agent-worker/docs-api');

/**
 * Typed client of the documentation service. It never retries: retries belong to Temporal's activity policies, so
 * they never multiply. Every failure is an ApplicationFailure of failures.ts; messages never hold the key. Each
 * request is a CLIENT span, a child of the active one (the activity's), and carries its W3C `traceparent`: the
 * OpenTelemetry API is a no-op until startTracing registers the SDK.
 */
export class DocsApiClient {
  readonly #apiKey: ApiKey;
  readonly #baseUrl: string;
  readonly #dispatcher: Dispatcher;
  readonly #onRequestEnd: ((request: RequestEnd) => void) | undefined;

  constructor(options: DocsApiClientOptions) {
    this.#apiKey = typeof options.apiKey === 'string' ? new ApiKey(options.apiKey) : options.apiKey;
    this.#baseUrl = new URL(options.baseUrl).toString().replace(/\/+$/, '');
    this.#onRequestEnd = options.onRequestEnd;
    this.#dispatcher = new Agent({
      connections: 64,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connect: { timeout: options.timeouts?.connectMs ?? 10_000 },
      headersTimeout: options.timeouts?.headersMs ?? 30_000,
      bodyTimeout: options.timeouts?.bodyMs ?? 30_000,
    });
  }

  /** POST /v2/agent/{projectId}/job. Not idempotent: a failure whose details say safeToRetry false may have created a job. */
  async createJob(
    projectId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const args = checked('createJob', promptArgs, { projectId, prompt: body.prompt });
    const path = `/v2/agent/${args.projectId}/job`;
    return this.#send('createJob', 'POST', path, { prompt: args.prompt }, parseJobAnswer, options);
  }

  /** GET /v2/agent/{projectId}/job/{id}. */
  async getJob(projectId: string, jobId: string, options: RequestOptions = {}): Promise<AgentJob> {
    const args = checked('getJob', jobArgs, { projectId, jobId });
    const path = `/v2/agent/${args.projectId}/job/${args.jobId}`;
    return this.#send('getJob', 'GET', path, undefined, parseJobAnswer, options);
  }

  /** POST /v2/agent/{projectId}/job/{id}/message. Not idempotent, like createJob. */
  async sendMessage(
    projectId: string,
    jobId: string,
    body: { prompt: string },
    options: RequestOptions = {},
  ): Promise<AgentJob> {
    const args = checked('sendMessage', messageArgs, { projectId, jobId, prompt: body.prompt });
    const path = `/v2/agent/${args.projectId}/job/${args.jobId}/message`;
    return this.#send('sendMessage', 'POST', path, { prompt: args.prompt }, parseJobAnswer, options);
  }

  /** GET /v1/analytics/{projectId}/visitors: one offset page. */
  async getVisitors(
    projectId: string,
    query: VisitorsQuery,
    options: RequestOptions = {},
  ): Promise<VisitorsPage> {
    const { projectId: project, ...checkedQuery } = checked('getVisitors', visitorsArgs, {
      ...query,
      projectId,
    });
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(checkedQuery)) {
      if (value !== undefined) params.set(key, String(value));
    }
    const path = `/v1/analytics/${project}/visitors?${params.toString()}`;
    return this.#send(
      'getVisitors',
      'GET',
      path,
      undefined,
      (json) => visitorsPageSchema.safeParse(json),
      options,
    );
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
    const url = this.#baseUrl + path;
    // Ids only: the key travels in the Authorization header, which no span reads.
    const { pathname, host } = new URL(url);
    const span = tracer.startSpan(`${method} ${pathname}`, {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': method, 'url.path': pathname, 'server.address': host },
    });
    const headers: Record<string, string> = {
      authorization: this.#apiKey.authorizationHeader(),
      accept: 'application/json',
      'user-agent': 'docs-agent-worker',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    propagation.inject(trace.setSpan(context.active(), span), headers);
    const startedAt = performance.now();
    let status: number | undefined;
    let aborted = false;
    try {
      const redact = (text: string) => this.#apiKey.redact(text);
      const facts: FailureFacts = { operation, retryUnknownOutcome: options.retryUnknownOutcome };
      let response: Dispatcher.ResponseData | undefined;
      let text: string;
      try {
        response = await request(url, {
          method,
          headers,
          body: body === undefined ? null : JSON.stringify(body),
          dispatcher: this.#dispatcher,
          signal: options.signal,
        });
        status = response.statusCode;
        span.setAttribute('http.response.status_code', status);
        text = await readText(response.body);
      } catch (error) {
        const requestId = response && firstHeader(response.headers, REQUEST_ID_HEADERS);
        throw transportFailure(error, { ...facts, status, requestId }, { signal: options.signal, redact });
      }
      const { headers: answerHeaders } = response;
      const header = (name: string) => firstHeader(answerHeaders, [name]);
      const requestId = firstHeader(answerHeaders, REQUEST_ID_HEADERS);
      const answered = { ...facts, status, requestId, bodyExcerpt: bodyExcerpt(text, redact) };
      if (status < 200 || status > 299) {
        throw statusFailure({ status, text, header }, answered, { redact, onWarning: options.onWarning });
      }
      // A job answer that carries an id names a job that exists (after a create too): the caller must not lose it.
      const namesJob = operation !== 'getVisitors';
      return answerOf({ text, contentType: header('content-type') ?? '' }, parse, answered, {
        namesJob,
        onWarning: options.onWarning,
      });
    } catch (error) {
      aborted = options.signal?.aborted === true;
      throw error;
    } finally {
      if (status === undefined || status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      const seconds = (performance.now() - startedAt) / 1000;
      this.#onRequestEnd?.({ operation, status, aborted, seconds });
    }
  }
}

const projectArgs = z.object({ projectId: projectIdSchema });
const jobArgs = projectArgs.extend({ jobId: jobIdSchema.transform(encodeURIComponent) });
const promptArgs = projectArgs.extend({ prompt: promptSchema });
const messageArgs = jobArgs.extend({ prompt: promptSchema });
const visitorsArgs = projectArgs
  .extend({
    dateFrom: apiDateSchema.optional(),
    dateTo: apiDateSchema.optional(),
    /** 1..250, default 50 at the service. */
    limit: intInRange(1, MAX_PAGE_SIZE).optional(),
    offset: intInRange(0).optional(),
  })
  .superRefine(checkDateOrder);

export type VisitorsQuery = Omit<z.input<typeof visitorsArgs>, 'projectId'>;

/** Arguments checked before anything is sent: an InvalidArgumentError failure names the first field and rule. */
function checked<S extends z.ZodType>(operation: DocsApiOperation, schema: S, args: unknown): z.output<S> {
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.map(String).join('.') || '(root)';
  throw docsApiFailure('invalidArgument', `invalid argument ${field}: ${issue?.message ?? 'is invalid'}`, {
    operation,
    field,
  });
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
