import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import * as proto from '@temporalio/proto';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The activities whose request the service acts on (it has no idempotency key), and what a second one does. */
const SERVICE_CALLS = {
  createAgentJob: {
    name: 'create',
    again: 'the service may have created a job, and a reset there would create another',
  },
  sendAgentJobMessage: {
    name: 'follow-up message',
    again: 'it may have reached the service, and a reset there would send it again',
  },
} as const;

type ServiceCallType = keyof typeof SERVICE_CALLS;

export interface ServiceCall {
  type: ServiceCallType;
  /** Its ActivityTaskScheduled event id. */
  scheduledAt: number;
  /** The event id that closed it (completed, failed, timed out, cancelled), or null while it is in flight. */
  closedAt: number | null;
  /** Its activity ran to its end (completed or failed): a create then recorded what the service did. */
  ranToEnd: boolean;
}

/**
 * Where an agentJob run may be reset without sending anything twice, from the run's own history alone. A reset
 * to the WorkflowTaskCompleted event E drops the events from E on and runs the workflow on from there: a create
 * or message scheduled before E and closed after it is dispatched again, and one scheduled after E is made again
 * by the workflow code. Either may have reached the service, so E is safe only once every create and message of
 * the run closed before it; while one is in flight no point is safe.
 */
export interface ResetPoints {
  /** WorkflowTaskCompleted event ids a reset may go to, oldest first. */
  safe: number[];
  calls: ServiceCall[];
}

/** The run's creates and messages, in the order scheduled. */
export function serviceCallsOf(events: readonly HistoryEvent[]): ServiceCall[] {
  const calls = new Map<number, ServiceCall>();
  for (const event of events) {
    const id = Number(event.eventId ?? 0);
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type != null && Object.hasOwn(SERVICE_CALLS, type)) {
      calls.set(id, { type: type as ServiceCallType, scheduledAt: id, closedAt: null, ranToEnd: false });
    }
    const scheduledId =
      event.activityTaskCompletedEventAttributes?.scheduledEventId ??
      event.activityTaskFailedEventAttributes?.scheduledEventId ??
      event.activityTaskTimedOutEventAttributes?.scheduledEventId ??
      event.activityTaskCanceledEventAttributes?.scheduledEventId;
    const call = scheduledId == null ? undefined : calls.get(Number(scheduledId));
    if (call) {
      call.closedAt = id;
      call.ranToEnd = Boolean(
        event.activityTaskCompletedEventAttributes ?? event.activityTaskFailedEventAttributes,
      );
    }
  }
  return [...calls.values()];
}

export function resetPointsOf(events: readonly HistoryEvent[]): ResetPoints {
  const calls = serviceCallsOf(events);
  const open = calls.find((call) => call.closedAt === null);
  const lastClose = Math.max(0, ...calls.map((call) => call.closedAt ?? 0));
  const safe = events
    .filter((event) => event.workflowTaskCompletedEventAttributes)
    .map((event) => Number(event.eventId ?? 0))
    .filter((id) => open === undefined && id > lastClose);
  return { safe, calls };
}

/** Why a reset to this event would send a request again (the first call it would repeat). */
function whyUnsafe(points: ResetPoints, toEventId: number | undefined): string {
  const open = points.calls.find((call) => call.closedAt === null);
  if (open) {
    return `the ${SERVICE_CALLS[open.type].name} scheduled at event ${open.scheduledAt} is in flight: the service may act on it at any moment; reset once it has closed`;
  }
  if (toEventId === undefined)
    return 'no workflow task has completed since the last create or message closed';
  const call = points.calls.find(({ closedAt }) => closedAt !== null && closedAt > toEventId);
  if (!call) return `event ${toEventId} is not a workflow task completion of the run`;
  const { name, again } = SERVICE_CALLS[call.type];
  return `event ${toEventId} precedes the ${name} closed at event ${call.closedAt}: ${again}`;
}

/** A reset that could send a create or a follow-up again: refused, nothing was changed. */
export class AgentJobResetRefusedError extends Error {
  override readonly name = 'AgentJobResetRefused';
  constructor(
    message: string,
    readonly points: ResetPoints,
  ) {
    super(message);
  }
}

export interface ResetAgentJobOptions {
  /** A WorkflowTaskCompleted event id of the current run; default the latest safe one. */
  toEventId?: number;
  reason?: string;
}

/**
 * Resets the current run of an agentJob workflow, only to a point where nothing would be sent twice (see
 * ResetPoints); any other point throws AgentJobResetRefusedError with the reason and the safe points. Signals
 * received after the point are applied again (Temporal's default): follow-ups not yet sent are sent by the new run.
 */
export async function resetAgentJob(
  client: Client,
  workflowId: string,
  options: ResetAgentJobOptions = {},
): Promise<{ runId: string; resetRunId: string; toEventId: number }> {
  const { runId } = await client.workflow.getHandle(workflowId).describe();
  const { events } = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const points = resetPointsOf(events ?? []);
  const toEventId = options.toEventId ?? points.safe.at(-1);
  if (toEventId === undefined || !points.safe.includes(toEventId)) {
    const safe = points.safe.length === 0 ? 'no point is safe now' : `safe points: ${points.safe.join(', ')}`;
    throw new AgentJobResetRefusedError(`${whyUnsafe(points, toEventId)}; ${safe}`, points);
  }
  // fromObject turns the event id into the protocol's 64-bit integer.
  const request = proto.temporal.api.workflowservice.v1.ResetWorkflowExecutionRequest.fromObject({
    namespace: client.options.namespace,
    workflowExecution: { workflowId, runId },
    reason: options.reason ?? 'docs-agent job reset',
    workflowTaskFinishEventId: toEventId,
    requestId: randomUUID(),
  });
  const { runId: resetRunId } = await client.workflowService.resetWorkflowExecution(request);
  return { runId, resetRunId: resetRunId ?? '', toEventId };
}
