import { SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { ForwardingHandler } from '../docs-api/client';

const TRACER_NAME = 'docs-agent-worker/docs-api';

/**
 * An undici interceptor that gives every request to the documentation service a CLIENT span, a child of the
 * active span (the activity's), and sends its W3C `traceparent` (the global propagator's headers). The span
 * holds the method, the path (ids only: the key travels in the Authorization header, which no span reads) and the
 * status. Installed only when tracing is on (src/tracing/setup.ts).
 */
export function traceDocsApiRequests(): Dispatcher.DispatcherComposeInterceptor {
  const tracer = trace.getTracer(TRACER_NAME);
  return (dispatch) => (options, handler) => {
    const method = options.method;
    const pathOnly = (options.path ?? '/').split('?')[0] ?? '/';
    const span = tracer.startSpan(
      `${method} ${pathOnly}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'url.path': pathOnly,
          ...(options.origin === undefined ? {} : { 'server.address': new URL(String(options.origin)).host }),
        },
      },
      context.active(),
    );
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    return dispatch(
      { ...options, headers: { ...headersRecord(options.headers), ...carrier } },
      new SpanEndingHandler(span, handler),
    );
  };
}

/** The request's headers as a record (undici also takes flat arrays and iterables of pairs). */
function headersRecord(headers: Dispatcher.DispatchOptions['headers']): Record<string, string | string[]> {
  if (headers === undefined || headers === null) return {};
  const record: Record<string, string | string[]> = {};
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) record[String(headers[i])] = String(headers[i + 1]);
    return record;
  }
  const entries: Iterable<[string, string | string[] | undefined]> =
    Symbol.iterator in headers
      ? (headers as Iterable<[string, string | string[] | undefined]>)
      : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined) record[name] = value;
  return record;
}

class SpanEndingHandler extends ForwardingHandler {
  readonly #span: Span;

  constructor(span: Span, handler: Dispatcher.DispatchHandler) {
    super(handler);
    this.#span = span;
  }

  override onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.#span.setAttribute('http.response.status_code', statusCode);
    if (statusCode >= 400) this.#span.setStatus({ code: SpanStatusCode.ERROR });
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#span.end();
    super.onResponseEnd(controller, trailers);
  }

  override onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: error.name });
    this.#span.end();
    super.onResponseError(controller, error);
  }
}
