/**
 * Workflow interceptors of `@temporalio/interceptors-opentelemetry`, baked into the workflow bundle, and gated:
 * a run is traced only when its start carried a trace context (the `_tracer-data` header a traced client, a
 * traced Nexus handler or a traced previous run adds). Untraced runs go straight to the next interceptor: with
 * tracing off nowhere, a workflow creates no span and pays one header lookup per start.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header `@temporalio/interceptors-opentelemetry` carries the span context in. */
const TRACE_HEADER = '_tracer-data';

type Method = (input: unknown, next: (input: unknown) => unknown) => unknown;

export const interceptors: WorkflowInterceptorsFactory = () => {
  let traced = false;
  /**
   * An interceptor whose `methods` call OpenTelemetry's (made at the first traced call) when the run is traced,
   * and the next interceptor when not. The run's start (`execute`, before any other call) says which.
   */
  const gated = <T extends object>(make: () => T, methods: readonly (keyof T)[]): T => {
    let real: T | undefined;
    const method =
      (name: keyof T): Method =>
      (input, next) => {
        if (name === 'execute') traced = TRACE_HEADER in (input as { headers: object }).headers;
        if (!traced) return next(input);
        real ??= make();
        return (real[name] as Method).call(real, input, next);
      };
    return Object.fromEntries(methods.map((name) => [name, method(name)])) as T;
  };
  return {
    inbound: [
      gated<WorkflowInboundCallsInterceptor>(
        () => new OpenTelemetryInboundInterceptor(),
        ['execute', 'handleSignal', 'handleUpdate', 'validateUpdate', 'handleQuery'],
      ),
    ],
    outbound: [
      gated<WorkflowOutboundCallsInterceptor>(
        () => new OpenTelemetryOutboundInterceptor(),
        [
          'scheduleActivity',
          'scheduleLocalActivity',
          'startChildWorkflowExecution',
          'continueAsNew',
          'signalWorkflow',
        ],
      ),
    ],
    // The SDK calls dispose and does not wait; OpenTelemetry's returns a promise only to chain its own work.
    internals: [
      gated<WorkflowInternalsInterceptor>(() => new OpenTelemetryInternalsInterceptor(), ['dispose']),
    ],
  };
};
