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
  Headers,
  Next,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header `@temporalio/interceptors-opentelemetry` carries the span context in. */
const TRACE_HEADER = '_tracer-data';

const carriesTrace = (headers: Headers): boolean => TRACE_HEADER in headers;

class Tracing {
  traced = false;
  #inbound: OpenTelemetryInboundInterceptor | undefined;
  #outbound: OpenTelemetryOutboundInterceptor | undefined;
  #internals: OpenTelemetryInternalsInterceptor | undefined;
  get inbound(): OpenTelemetryInboundInterceptor {
    return (this.#inbound ??= new OpenTelemetryInboundInterceptor());
  }
  get outbound(): OpenTelemetryOutboundInterceptor {
    return (this.#outbound ??= new OpenTelemetryOutboundInterceptor());
  }
  get internals(): OpenTelemetryInternalsInterceptor {
    return (this.#internals ??= new OpenTelemetryInternalsInterceptor());
  }
}

type In = WorkflowInboundCallsInterceptor;
type Out = WorkflowOutboundCallsInterceptor;

class GatedInbound implements In {
  constructor(private readonly tracing: Tracing) {}
  execute(input: Parameters<Next<In, 'execute'>>[0], next: Next<In, 'execute'>) {
    this.tracing.traced = carriesTrace(input.headers);
    return this.tracing.traced ? this.tracing.inbound.execute(input, next) : next(input);
  }
  handleSignal(input: Parameters<Next<In, 'handleSignal'>>[0], next: Next<In, 'handleSignal'>) {
    return this.tracing.traced ? this.tracing.inbound.handleSignal(input, next) : next(input);
  }
  handleUpdate(input: Parameters<Next<In, 'handleUpdate'>>[0], next: Next<In, 'handleUpdate'>) {
    return this.tracing.traced ? this.tracing.inbound.handleUpdate(input, next) : next(input);
  }
  validateUpdate(input: Parameters<Next<In, 'validateUpdate'>>[0], next: Next<In, 'validateUpdate'>) {
    if (this.tracing.traced) this.tracing.inbound.validateUpdate(input, next);
    else next(input);
  }
  handleQuery(input: Parameters<Next<In, 'handleQuery'>>[0], next: Next<In, 'handleQuery'>) {
    return this.tracing.traced ? this.tracing.inbound.handleQuery(input, next) : next(input);
  }
}

class GatedOutbound implements Out {
  constructor(private readonly tracing: Tracing) {}
  scheduleActivity(input: Parameters<Next<Out, 'scheduleActivity'>>[0], next: Next<Out, 'scheduleActivity'>) {
    return this.tracing.traced ? this.tracing.outbound.scheduleActivity(input, next) : next(input);
  }
  scheduleLocalActivity(
    input: Parameters<Next<Out, 'scheduleLocalActivity'>>[0],
    next: Next<Out, 'scheduleLocalActivity'>,
  ) {
    return this.tracing.traced ? this.tracing.outbound.scheduleLocalActivity(input, next) : next(input);
  }
  startChildWorkflowExecution(
    input: Parameters<Next<Out, 'startChildWorkflowExecution'>>[0],
    next: Next<Out, 'startChildWorkflowExecution'>,
  ) {
    return this.tracing.traced ? this.tracing.outbound.startChildWorkflowExecution(input, next) : next(input);
  }
  continueAsNew(input: Parameters<Next<Out, 'continueAsNew'>>[0], next: Next<Out, 'continueAsNew'>) {
    return this.tracing.traced ? this.tracing.outbound.continueAsNew(input, next) : next(input);
  }
  signalWorkflow(input: Parameters<Next<Out, 'signalWorkflow'>>[0], next: Next<Out, 'signalWorkflow'>) {
    return this.tracing.traced ? this.tracing.outbound.signalWorkflow(input, next) : next(input);
  }
}

class GatedInternals implements WorkflowInternalsInterceptor {
  constructor(private readonly tracing: Tracing) {}
  dispose(
    input: Parameters<Next<WorkflowInternalsInterceptor, 'dispose'>>[0],
    next: Next<WorkflowInternalsInterceptor, 'dispose'>,
  ): void {
    // The SDK calls dispose and does not wait; OpenTelemetry's returns a promise only to chain its own work.
    if (this.tracing.traced) void this.tracing.internals.dispose(input, next);
    else next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const tracing = new Tracing();
  return {
    inbound: [new GatedInbound(tracing)],
    outbound: [new GatedOutbound(tracing)],
    internals: [new GatedInternals(tracing)],
  };
};
