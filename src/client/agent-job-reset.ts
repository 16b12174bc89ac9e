import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import * as proto from '@temporalio/proto';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The activities that send a request the service acts on, and which of them a reset may discard. */
const CREATE = 'createAgentJob';
const MESSAGE = 'sendAgentJobMessage';

/**
 * Where an agentJob run may be reset without sending anything twice. A reset discards the events after its
 * point and runs the workflow on from there:
 * - a follow-up message whose activity closed after the point would be sent again (the service has no
 *   idempotency key), so the point must come after the last message's close;
 * - a create is safe anywhere: the create activity finds the job in the create record of its workflow id and
 *   does not send it again;
 * - a create or message still in flight may land at any moment: no point is safe until it has closed.
 */
export interface ResetPoints {
  /** WorkflowTaskCompleted event ids a reset may go to, oldest first (empty while a call is in flight). */
  safe: number[];
  /** The close event of the last follow-up message (0 when none was sent): safe points come after it. */
  lastMessageClosedAt: number;
  /** A create or message activity scheduled and not closed, by its scheduled event id. */
  inFlight: number | null;
  /** Its activity type. */
  inFlightType: typeof CREATE | typeof MESSAGE | null;
}

export function resetPointsOf(events: readonly HistoryEvent[]): ResetPoints {
  const calls = new Map<number, typeof CREATE | typeof MESSAGE>();
  const closed = new Map<number, number>();
  const taskCompletions: number[] = [];
  for (const event of events) {
    const id = Number(event.eventId ?? 0);
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type === CREATE || type === MESSAGE) calls.set(id, type);
    const scheduledId =
      event.activityTaskCompletedEventAttributes?.scheduledEventId ??
      event.activityTaskFailedEventAttributes?.scheduledEventId ??
      event.activityTaskTimedOutEventAttributes?.scheduledEventId ??
      event.activityTaskCanceledEventAttributes?.scheduledEventId;
    if (scheduledId != null) closed.set(Number(scheduledId), id);
    if (event.workflowTaskCompletedEventAttributes) taskCompletions.push(id);
  }
  let lastMessageClosedAt = 0;
  let inFlight: number | null = null;
  let inFlightType: ResetPoints['inFlightType'] = null;
  for (const [scheduledId, type] of calls) {
    const closedAt = closed.get(scheduledId);
    if (closedAt === undefined) {
      inFlight = scheduledId;
      inFlightType = type;
    } else if (type === MESSAGE) lastMessageClosedAt = Math.max(lastMessageClosedAt, closedAt);
  }
  const safe = inFlight === null ? taskCompletions.filter((id) => id > lastMessageClosedAt) : [];
  return { safe, lastMessageClosedAt, inFlight, inFlightType };
}

/** A reset that would send a create or a follow-up again: refused, nothing was changed. */
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
 * ResetPoints); any other point throws AgentJobResetRefusedError listing the safe ones. Signals received after
 * the point are applied again (Temporal's default): follow-ups not yet sent are sent by the new run.
 */
export async function resetAgentJob(
  client: Client,
  workflowId: string,
  options: ResetAgentJobOptions = {},
): Promise<{ runId: string; resetRunId: string; toEventId: number }> {
  const handle = client.workflow.getHandle(workflowId);
  const { runId } = await handle.describe();
  const { events } = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const points = resetPointsOf(events ?? []);
  if (points.inFlight !== null) {
    throw new AgentJobResetRefusedError(
      `a create or follow-up (event ${points.inFlight}) is in flight: the service may act on it at any moment; reset once it has closed`,
      points,
    );
  }
  const toEventId = options.toEventId ?? points.safe.at(-1);
  if (toEventId === undefined || !points.safe.includes(toEventId)) {
    const range =
      points.safe.length === 0
        ? 'no workflow task has completed since the last follow-up was sent'
        : `safe points: workflow task completions ${points.safe.join(', ')}`;
    throw new AgentJobResetRefusedError(
      `resetting to event ${toEventId ?? '(none)'} would send follow-ups again (the last one closed at event ${points.lastMessageClosedAt}); ${range}`,
      points,
    );
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
