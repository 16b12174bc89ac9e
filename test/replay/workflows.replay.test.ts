import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../dev/temporal';
import { replayOptions } from '../../dev/workflow-bundle';
import { historyBytes, historyFromJson } from '../../dev/history-json';
import { BUDGET_LIMITER_WORKFLOW_TYPE, type PermitGrant } from '../../src/contract/budget';

// Histories recorded by `npx tsx scripts/record-histories.ts` against the simulator. Replaying them with
// today's bundle proves a code change keeps old runs deterministic; re-record only for intended changes
// (and then with patched() for runs already in production).
const HISTORIES_DIR = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();

interface RecordedEvent {
  eventType: string;
}

function load(name: string): { text: string; events: RecordedEvent[] } {
  const text = fs.readFileSync(path.join(HISTORIES_DIR, name), 'utf8');
  return { text, events: (JSON.parse(text) as { events: RecordedEvent[] }).events };
}

/**
 * The recorded workflow id. Replay must use it: the poll jitter is derived from the workflow id (like any
 * workflowInfo() field, it is part of the run's deterministic input), so a made-up id replays other timers.
 */
function workflowIdOf(history: ReturnType<typeof historyFromJson>): string {
  const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId;
  assert.ok(workflowId, 'the first event names the workflow id');
  return workflowId;
}

interface MarkerEvent extends RecordedEvent {
  markerRecordedEventAttributes?: {
    markerName?: string;
    details?: Record<string, { payloads?: { data?: string }[] }>;
  };
}

/** The JSON of each marker's payloads (patch ids, local activity types), by marker name. */
function markers(events: MarkerEvent[], markerName: string): string[] {
  return events
    .map((event) => event.markerRecordedEventAttributes)
    .filter((marker) => marker?.markerName === markerName)
    .flatMap((marker) => Object.values(marker?.details ?? {}).flatMap((detail) => detail.payloads ?? []))
    .map((payload) => Buffer.from(payload.data ?? '', 'base64').toString('utf8'));
}

const count = (events: RecordedEvent[], suffix: string) =>
  events.filter((event) => event.eventType.endsWith(suffix)).length;

describe('replay of committed histories', () => {
  test('agentJob: polls in one activity, follow-ups on permits of the project limiter, a continued run', () => {
    const { text, events } = load('agent-job.json');
    assert.deepEqual(
      markers(events, 'core_patch'),
      [],
      'no patch: workflow changes ship under Worker Versioning',
    );
    assert.ok(text.includes('pollAgentJob'), 'polls in the poll activity');
    const localActivities = markers(events, 'core_local_activity').join('\n');
    assert.match(localActivities, /"activity_type":"checkWorkflowInput"/);
    assert.match(localActivities, /"activity_type":"requestBudgetPermit"/, 'permits asked by local activity');
    assert.doesNotMatch(
      localActivities,
      /releaseBudgetPermits/,
      'the call activities release their own permits',
    );
    assert.equal(
      count(events, 'ACTIVITY_TASK_CANCEL_REQUESTED'),
      0,
      'follow-ups go out beside the poll activity',
    );
    assert.ok(count(events, 'SIGNALED') >= 3 && count(events, 'UPDATE_COMPLETED') >= 1);
    assert.equal(count(load('agent-job-continued-run.json').events, 'CONTINUED_AS_NEW'), 1);
    const limiter = load('budget-limiter-agent.json');
    assert.ok(limiter.text.includes(BUDGET_LIMITER_WORKFLOW_TYPE), 'the limiter workflow');
    assert.ok(count(limiter.events, 'SIGNALED') >= 4, 'asks and releases of the create and messages');
    assert.ok(
      load('agent-job-create-record.json').text.includes('agentJobCreateRecord'),
      'the create record',
    );
  });

  test('visitorsExport: a run that continued as new with retried pages, and the run that merged', () => {
    const continued = load('visitors-export-continued-run.json').events;
    assert.equal(count(continued, 'CONTINUED_AS_NEW'), 1);
    assert.ok(count(continued, 'ACTIVITY_TASK_COMPLETED') >= 5, 'pages fetched before continuing');
    const last = load('visitors-export-last-run.json').events;
    assert.equal(count(last, 'WORKFLOW_EXECUTION_COMPLETED'), 1);
    const activityTypes = new Set(
      (
        last as (RecordedEvent & {
          activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
        })[]
      )
        .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
        .filter((name) => name !== undefined),
    );
    assert.ok(activityTypes.has('mergeVisitorsExport'), `activities: ${[...activityTypes].join(', ')}`);
  });

  test('visitorsNightly: a scheduled run planned from the destination caught up on two days', () => {
    const { events, text } = load('visitors-nightly-run.json');
    assert.ok(text.includes('planNightlyExport'));
    assert.equal(count(events, 'CHILD_WORKFLOW_EXECUTION_COMPLETED'), 2, 'one child export per day');
  });

  test('visitorsExport: runs of pages with batches of permits while open, one permit a run after a 429', () => {
    const runs = ['continued-run', 'last-run'].map((run) => load(`visitors-export-${run}.json`));
    const grants = runs.flatMap(({ events }) =>
      (
        events as (RecordedEvent & {
          workflowExecutionSignaledEventAttributes?: { input?: { payloads?: { data?: string }[] } };
        })[]
      )
        .map((event) => event.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data)
        .filter((data) => data !== undefined)
        .map((data) => JSON.parse(Buffer.from(data, 'base64').toString()) as PermitGrant),
    );
    assert.ok(
      grants.some((grant) => (grant.count ?? 1) > 1),
      'a batch granted while the budget had room',
    );
    assert.ok(
      grants.some((grant) => grant.spare === 0),
      'the budget binds after the 429: one permit a run',
    );
    const scheduled = runs.flatMap(({ text }) => text.match(/"fetchVisitorsPages?(Block)?"/g) ?? []);
    assert.ok(scheduled.length >= 4, `${scheduled.length} runs of pages`);
    assert.ok(
      scheduled.every((name) => name === '"fetchVisitorsPages"'),
      'one page activity: runs of pages',
    );
    for (const { events } of runs) assert.deepEqual(markers(events, 'core_patch'), [], 'no patch');
    const limiter = load('budget-limiter-analytics.json');
    assert.ok(limiter.text.includes(BUDGET_LIMITER_WORKFLOW_TYPE), 'the analytics limiter workflow');
  });

  for (const name of files) {
    test(`replays ${name} deterministically with the current workflow code`, async () => {
      installQuietRuntime();
      const history = historyFromJson(load(name).text);
      assert.ok(!/bearer|authorization/i.test(historyBytes(history).toString('latin1')), 'no credentials');
      await Worker.runReplayHistory(await replayOptions(), history, workflowIdOf(history));
    });
  }

  test('a history the current code would not produce fails replay (the guard can fail)', async () => {
    installQuietRuntime();
    const history = historyFromJson(load('visitors-export-last-run.json').text);
    const scheduled = history.events?.find((event) => event.activityTaskScheduledEventAttributes);
    const activityType = scheduled?.activityTaskScheduledEventAttributes?.activityType;
    assert.ok(activityType, 'the history schedules an activity');
    activityType.name = 'renamedActivity';
    await assert.rejects(
      Worker.runReplayHistory(await replayOptions(), history, workflowIdOf(history)),
      (error: Error) => error.name === 'DeterminismViolationError',
    );
  });
});
