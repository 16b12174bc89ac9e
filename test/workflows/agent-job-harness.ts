import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import * as proto from '@temporalio/proto';
import { startAgentJob, type AgentJobHandle } from '../../src/client/agent-job';
import { agentJobCreateRecordId } from '../../src/client/agent-job-runs';
import type { AgentJobInput, PollingOptions } from '../../src/contract/agent-job';
import type { JobOutcome, Simulator } from '../../dev/simulator';
import type { TestStack } from '../../dev/stack';
import { historyBytes } from '../../dev/history-json';
import { useStack } from '../helpers/stack';

/** One dev server, one simulator (jobs of 2 s) and one worker for the test file. */
export function useAgentJobStack(): TestStack {
  return useStack({ name: 'agent-job', simulator: { jobs: { durationMs: 2000 } } });
}

/**
 * Polling fast enough for tests. The dev server fires timers with about one second of precision, so
 * intervals below 1 s would only blur the schedule.
 */
export const TEST_POLLING = {
  initialInterval: '1s',
  maxInterval: '1s',
  backoffCoefficient: 1,
  deadline: '2m',
} as const satisfies PollingOptions;

let projects = 0;

/** A project id of its own per test: simulator counters and request logs are then per test. */
export function uniqueProject(label: string): string {
  projects += 1;
  return `${label}-${process.pid}-${projects}`;
}

/** A project of its own whose jobs stay active `durationMs` and then end `outcome`. */
export function projectWithJobs(
  sim: Simulator,
  label: string,
  durationMs: number,
  outcome: JobOutcome = 'completed',
): string {
  const projectId = uniqueProject(label);
  sim.configureProject(projectId, { jobs: { durationMs, outcome } });
  return projectId;
}

export async function startJob(
  client: Client,
  input: Omit<AgentJobInput, 'polling'> & { polling?: PollingOptions | undefined },
  key = 'job',
): Promise<AgentJobHandle> {
  return startAgentJob(client, { polling: TEST_POLLING, ...input }, { key });
}

/** Waits until `probe` returns a value other than undefined (or false). */
export async function eventually<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The create record of a workflow id deleted (none: nothing to do), as when its writes failed or retention dropped it. */
export async function deleteCreateRecord(client: Client, workflowId: string): Promise<void> {
  const recordId = agentJobCreateRecordId(workflowId);
  await client.workflowService
    .deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: recordId } })
    .catch(() => undefined);
  const gone = () =>
    client.workflow
      .getHandle(recordId)
      .describe()
      .then(
        () => false,
        (error: unknown) => error instanceof WorkflowNotFoundError,
      );
  await eventually(gone, 'the record gone', 90_000);
}

/** The ApplicationFailure a workflow failed with. */
export async function workflowFailure(result: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await result;
  } catch (error) {
    assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${inspect(error)}`);
    assert.ok(
      error.cause instanceof ApplicationFailure,
      `expected an ApplicationFailure, got ${inspect(error.cause)}`,
    );
    return error.cause;
  }
  assert.fail('expected the workflow to fail');
}

type SimRequest = ReturnType<Simulator['requests']>[number];

export function requestsOf(
  sim: Simulator,
  filter: { projectId?: string; route?: SimRequest['route'] },
): SimRequest[] {
  return sim
    .requests()
    .filter(
      (r) =>
        (filter.projectId === undefined || r.projectId === filter.projectId) &&
        (filter.route === undefined || r.route === filter.route),
    );
}

export function timeOf(request: SimRequest): number {
  const at: unknown = request.at;
  return typeof at === 'number' ? at : Date.parse(String(at));
}

/** The whole history as protobuf bytes (payloads included verbatim), to search for what must not be there. */
export async function historyOf(handle: WorkflowHandle): Promise<Buffer> {
  return historyBytes(await handle.fetchHistory());
}

/** How many times the workflow scheduled the activity of this type (e.g. 'createAgentJob'). */
export async function activitiesScheduled(handle: WorkflowHandle, activityType: string): Promise<number> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  ).length;
}

/** Event type names of a history, e.g. 'EVENT_TYPE_TIMER_STARTED'. */
export async function eventTypes(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).map(
    (event) => proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'UNKNOWN',
  );
}

/** The input a run handed to its successor (the first payload of its continued-as-new event). */
export async function continuedAsNewInput<T>(handle: WorkflowHandle): Promise<T | undefined> {
  const { events } = await handle.fetchHistory();
  const data = events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as T) : undefined;
}
