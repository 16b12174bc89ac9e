import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { historyBytes } from '../../dev/history-json';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Every run of a workflow from its first one, following continue-as-new (not visibility, which may lag). */
export interface RunChain {
  runs: number;
  events: HistoryEvent[];
  /** Sum of the protobuf encoding of each run's history. */
  bytes: number;
}

export async function historyChain(client: Client, workflowId: string): Promise<RunChain> {
  const latest = await client.workflow.getHandle(workflowId).fetchHistory();
  const started = latest.events?.[0]?.workflowExecutionStartedEventAttributes;
  const chain: RunChain = { runs: 0, events: [], bytes: 0 };
  let runId: string | null | undefined = started?.firstExecutionRunId;
  if (!runId) throw new Error(`${workflowId}: no first run id in its history`);
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    chain.runs += 1;
    chain.events.push(...events);
    chain.bytes += historyBytes(history).length;
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return chain;
}

/** Milliseconds since the epoch of an event's timestamp. */
export function eventTimeMs(event: HistoryEvent): number {
  const time = event.eventTime;
  if (!time) return Number.NaN;
  return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}
