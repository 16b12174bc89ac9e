import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';
import type { Dispatcher } from 'undici';
import { observingInterceptor } from '../docs-api/client';

/** What tracing adds to a process: interceptors for its clients, worker and HTTP client, and a flush at exit. */
export interface Tracing {
  clientInterceptors: WorkflowClientInterceptor[];
  worker: Required<Pick<WorkerOptions, 'interceptors' | 'sinks'>>;
  docsApiInterceptors: Dispatcher.DispatchInterceptor[];
  /** Runs `fn` in a new root span (a CLI command's), ended when `fn` settles. */
  inRootSpan<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Exports what is buffered (OTEL_BSP_*), then stops. */
  shutdown(): Promise<void>;
}

/**
 * Whether the standard OpenTelemetry environment asks for traces: an OTLP endpoint or a traces exporter other
 * than `none`, and the SDK not disabled. Nothing else turns tracing on.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter !== undefined && exporter !== '') return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry Node SDK from the OTEL_* environment (exporter, endpoint, protocol including
 * `http/json`, service name, batching) and returns the interceptors that carry one trace from a client's start
 * through the workflow and its activities to each HTTP request. Without that environment it returns undefined
 * and loads nothing: the SDK and the interceptors are imported only here (the request hook's module needs
only the OpenTelemetry API, which is a no-op without an SDK).
 */
export async function startTracing(defaultServiceName: string): Promise<Tracing | undefined> {
  if (!tracingRequested()) return undefined;
  const [{ NodeSDK, resources }, { getSpanProcessorsFromEnv }, otel] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    // The SDK's own reading of OTEL_TRACES_EXPORTER and OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL.
    import('@opentelemetry/sdk-node/build/src/utils.js'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const processors = getSpanProcessorsFromEnv();
  const [processor] = processors;
  if (processor === undefined) return undefined;
  const resource = new resources.Resource({
    'service.name': process.env.OTEL_SERVICE_NAME?.trim() || defaultServiceName,
  }).merge(resources.envDetectorSync.detect());
  const sdk = new NodeSDK({
    resource,
    spanProcessors: processors,
    autoDetectResources: false,
    instrumentations: [],
  });
  sdk.start();
  const clientInterceptor = new otel.OpenTelemetryWorkflowClientInterceptor();
  return {
    clientInterceptors: [clientInterceptor],
    worker: {
      interceptors: {
        // The client the Nexus handlers start workflows with.
        client: { workflow: [clientInterceptor] },
        activity: [
          (ctx) => ({
            inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
        nexus: [
          (ctx) => ({
            inbound: new otel.OpenTelemetryNexusInboundInterceptor(ctx),
            outbound: new otel.OpenTelemetryNexusOutboundInterceptor(ctx),
          }),
        ],
      },
      // Workflow code records its spans in the sandbox; this sink hands them to the same exporter.
      sinks: { exporter: otel.makeWorkflowExporter(processor, resource) },
    },
    docsApiInterceptors: [traceDocsApiRequests()],
    inRootSpan: (name, fn) =>
      trace.getTracer(defaultServiceName).startActiveSpan(name, { root: true }, async (span) => {
        try {
          return await fn();
        } catch (error) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: error instanceof Error ? error.name : 'error',
          });
          throw error;
        } finally {
          span.end();
        }
      }),
    shutdown: () => sdk.shutdown(),
  };
}

/**
 * With tracing off, a run started by a traced client elsewhere still records spans in the sandbox (its start
 * carried a trace context): this sink drops them, instead of the SDK logging an unregistered sink per span.
 */
export const DROPPED_WORKFLOW_SPANS: InjectedSinks<{ exporter: { export(spans: unknown[]): void } }> = {
  exporter: { export: { fn: () => undefined } },
};

const TRACER_NAME = 'docs-agent-worker/docs-api';

/**
 * An undici interceptor that gives every request to the documentation service a CLIENT span, a child of the
 * active span (the activity's), and sends its W3C `traceparent` (the global propagator's headers). The span
 * holds the method, the path (ids only: the key travels in the Authorization header, which no span reads) and the
 * status. Installed only when tracing is on.
 */
export function traceDocsApiRequests(): Dispatcher.DispatcherComposeInterceptor {
  const tracer = trace.getTracer(TRACER_NAME);
  return observingInterceptor((options) => {
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
    return {
      options: { ...options, headers: { ...headersRecord(options.headers), ...carrier } },
      onStatus: (statusCode) => {
        span.setAttribute('http.response.status_code', statusCode);
        if (statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      },
      onEnd: (error) => {
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error.name });
        span.end();
      },
    };
  });
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
