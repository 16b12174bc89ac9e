import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';

/**
 * What tracing adds to a process: interceptors for its clients and worker, and a flush at exit. The HTTP client
 * makes its request spans with the OpenTelemetry API (src/docs-api/client.ts), which the SDK started here serves.
 */
export interface Tracing {
  clientInterceptors: WorkflowClientInterceptor[];
  worker: Required<Pick<WorkerOptions, 'interceptors' | 'sinks'>>;
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
 * and loads nothing: the SDK and the interceptors are imported only here.
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
