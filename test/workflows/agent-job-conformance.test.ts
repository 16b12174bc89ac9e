import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { sendFollowUpAndWait } from '../../src/client/agent-job';
import { AgentJobFailureType } from '../../src/contract/agent-job';
import { followUpSignal } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE } from '../../src/contract/names';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import { visitorsExport } from '../../src/workflows';
import { useStack } from '../helpers/stack';
import {
  activitiesScheduled,
  requestsOf,
  startJob,
  uniqueProject,
  workflowFailure,
} from './agent-job-harness';

// The workflows against a simulator that answers in the real service's shapes: `{ "error": "<message>" }`
// bodies (its default), fields of unexpected types, 403 and 3xx.
const stack = useStack({
  name: 'conformance',
  simulator: { errorBodies: 'service', jobs: { durationMs: 2000 }, analytics: { paths: 40 } },
});

/** What the client makes of the service's 403, before the service's own message. */
const FORBIDDEN =
  /forbidden: the key is not allowed this operation \(a read-only key, or one restricted to other IP addresses\)/;
/** The fields odd-optional-types sends with an unexpected type, as each answer's warnings name them. */
const DROPPED = [
  'response field model: unexpected type object, dropped',
  'response field source: unexpected type string, dropped',
  'response field createdAt: unexpected type number, dropped',
];

function warningsOf(result: unknown): string[] | undefined {
  return (result as { responseWarnings?: string[] }).responseWarnings;
}

/** The results of the workflow's completed activities of one type, as the history holds them. */
async function activityResults(handle: WorkflowHandle, activityType: string): Promise<unknown[]> {
  const { events } = await handle.fetchHistory();
  const types = new Map<number, string>();
  const results: unknown[] = [];
  for (const event of events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(Number(event.eventId), scheduled.activityType?.name ?? '');
    const completed = event.activityTaskCompletedEventAttributes;
    const data = completed?.result?.payloads?.[0]?.data;
    if (completed && data && types.get(Number(completed.scheduledEventId)) === activityType) {
      results.push(JSON.parse(Buffer.from(data).toString('utf8')));
    }
  }
  return results;
}

describe('agentJob: answers with odd fields keep the job', () => {
  test('a create answer with model an object, createdAt a number and source a string: the job goes on', async () => {
    const projectId = uniqueProject('odd-create');
    stack.sim.faults.add({
      route: 'createJob',
      projectId,
      kind: 'drift',
      drift: 'odd-optional-types',
      times: 1,
    });
    const handle = await startJob(stack.client, { projectId, prompt: 'Fix the typos' });
    const result = await handle.result();

    const creates = requestsOf(stack.sim, { projectId, route: 'createJob' });
    assert.equal(creates.length, 1);
    assert.equal(result.jobId, creates[0]?.jobId, 'the job the service created, not an orphan');
    assert.equal(result.status, 'completed');
    // Later reads answered normally: the fields are back in the result.
    assert.equal(result.model, 'sim-agent-1');
    assert.deepEqual(result.source, {
      repository: `https://github.com/sim-org/${projectId}-docs`,
      ref: 'main',
    });
    const [created] = await activityResults(handle, 'createAgentJob');
    assert.deepEqual(warningsOf(created), DROPPED);
  });

  test('a create answer with an odd status but an id: the job is adopted and polled, never lost', async () => {
    const projectId = uniqueProject('odd-status');
    stack.sim.faults.add({ route: 'createJob', projectId, kind: 'drift', drift: 'wrong-types', times: 1 });
    const result = await (await startJob(stack.client, { projectId, prompt: 'Document the API' })).result();
    const creates = requestsOf(stack.sim, { projectId, route: 'createJob' });
    assert.equal(creates.length, 1, 'never created twice');
    assert.equal(result.jobId, creates[0]?.jobId);
    assert.equal(result.status, 'completed');
    assert.ok(result.polls >= 1);
  });

  test('odd get-job and message answers count, their dropped fields named; the update returns the job without them', async () => {
    const projectId = uniqueProject('odd-reads');
    stack.sim.configureProject(projectId, { jobs: { durationMs: 4000 } });
    stack.sim.faults.add({
      route: 'getJob',
      projectId,
      kind: 'drift',
      drift: 'odd-optional-types',
      times: 2,
    });
    stack.sim.faults.add({ route: 'sendMessage', projectId, kind: 'drift', drift: 'odd-optional-types' });
    const handle = await startJob(stack.client, { projectId, prompt: 'Start' });
    const answer = await sendFollowUpAndWait(stack.client, handle.workflowId, { prompt: 'And the FAQ' });
    assert.equal(answer.model, undefined);
    assert.equal(answer.source, undefined);
    const result = await handle.result();
    assert.equal(result.status, 'completed');
    assert.deepEqual(
      result.followUps.map((f) => f.status),
      ['delivered'],
    );
    assert.equal(stack.sim.stats().jobsCreatedByProject[projectId], 1);
    // A message's dropped fields travel beside the job in the activity's result (history); a poll logs its own.
    const [sent] = await activityResults(handle, 'sendAgentJobMessage');
    assert.deepEqual(warningsOf(sent), DROPPED);
    const odd = requestsOf(stack.sim, { projectId, route: 'getJob' }).filter((r) => r.fault === 'drift');
    assert.equal(odd.length, 2, 'both odd reads were polls');
  });

  test('source.ref null is kept in the result', async () => {
    const projectId = uniqueProject('null-ref');
    stack.sim.faults.add({ route: 'getJob', projectId, kind: 'drift', drift: 'null-ref' });
    const result = await (await startJob(stack.client, { projectId, prompt: 'Any branch' })).result();
    assert.deepEqual(result.source, {
      repository: `https://github.com/sim-org/${projectId}-docs`,
      ref: null,
    });
  });
});

describe('agentJob: 403 and 3xx are refusals, not unknown outcomes', () => {
  test('a redirected create fails as rejected, naming the location and DOCS_API_BASE_URL; no job', async () => {
    const projectId = uniqueProject('redirect');
    stack.sim.faults.add({ route: 'createJob', projectId, kind: 'redirect' });
    const handle = await startJob(stack.client, { projectId, prompt: 'Over http' });
    const failure = await workflowFailure(handle.result());
    assert.equal(failure.type, AgentJobFailureType.createRejected);
    const location = `https://${new URL(stack.sim.url).host}/v2/agent/${projectId}/job`;
    assert.ok(failure.message.includes(`redirected to ${location}`), failure.message);
    assert.match(failure.message, /set DOCS_API_BASE_URL/);
    assert.deepEqual(
      requestsOf(stack.sim, { projectId }).map((r) => [r.route, r.status, r.processed]),
      [['createJob', 301, false]],
    );
    assert.equal(await activitiesScheduled(handle, 'createAgentJob'), 1, 'not re-sent');
  });

  test('403 on create: rejected, saying the key may be read-only or IP-restricted', async () => {
    const projectId = uniqueProject('forbidden');
    stack.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 403 });
    const failure = await workflowFailure(
      (await startJob(stack.client, { projectId, prompt: 'Read-only key' })).result(),
    );
    assert.equal(failure.type, AgentJobFailureType.createRejected);
    // The explanation, then the service's own `{ "error": "<message>" }`.
    assert.match(failure.message, new RegExp(`${FORBIDDEN.source}: injected HTTP 403 \\| HTTP 403`));
    assert.equal(stack.sim.stats().jobsCreatedByProject[projectId], undefined);
  });

  test('403 on get-job: the poll is refused with the same explanation', async () => {
    const projectId = uniqueProject('forbidden-read');
    stack.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 403 });
    const failure = await workflowFailure(
      (await startJob(stack.client, { projectId, prompt: 'IP-restricted key' })).result(),
    );
    assert.equal(failure.type, AgentJobFailureType.pollRejected);
    assert.match(failure.message, new RegExp(`${FORBIDDEN.source}: injected HTTP 403`));
    assert.equal(requestsOf(stack.sim, { projectId, route: 'getJob' }).length, 1, 'not retried');
  });

  test("the older detailed error body { error: { code, message } }: the same explanation and the service's message", async () => {
    const projectId = uniqueProject('forbidden-detailed');
    stack.sim.configureProject(projectId, { errorBodies: 'detailed' });
    stack.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 403 });
    const failure = await workflowFailure(
      (await startJob(stack.client, { projectId, prompt: 'Older error bodies' })).result(),
    );
    assert.equal(failure.type, AgentJobFailureType.pollRejected);
    // The message is read out of the nested object (not "[object Object]", not the bare status).
    assert.match(failure.message, new RegExp(`${FORBIDDEN.source}: injected HTTP 403 \\| HTTP 403`));
  });

  test('403 on a follow-up: recorded rejected with the explanation, sent once; the job completes', async () => {
    const projectId = uniqueProject('forbidden-message');
    stack.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 403 });
    const handle = await startJob(stack.client, { projectId, prompt: 'Start' });
    await handle.signal(followUpSignal, { prompt: 'And the FAQ', messageId: 'faq' });
    const result = await handle.result();
    assert.equal(result.status, 'completed');
    const [record] = result.followUps;
    assert.equal(record?.status, 'rejected');
    assert.match(record?.error ?? '', new RegExp(`${FORBIDDEN.source}: injected HTTP 403`));
    assert.equal(requestsOf(stack.sim, { projectId, route: 'sendMessage' }).length, 1);
  });
});

describe('visitorsExport against the service shapes', () => {
  test('pages with odd extra fields count; the export is whole', async () => {
    const projectId = uniqueProject('odd-pages');
    const range = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'drift', drift: 'odd-optional-types' });
    const result = await stack.client.workflow.execute(visitorsExport, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId: `conformance-${projectId}`,
      args: [{ projectId, ...range, pageSize: 10 }],
    });
    assert.equal(result.rows, 40);
    assert.equal(result.pages, 4);
    assert.deepEqual(result.warnings, []);
    const manifest = JSON.parse(
      await fs.readFile(
        path.join(stack.exportDir, projectId, '2026-11-01_2026-11-02', 'manifest.json'),
        'utf8',
      ),
    ) as VisitorsExportManifest;
    assert.equal(manifest.rows, 40);
    assert.equal(manifest.range.requested, undefined, 'explicit dates are sent as given');
  });

  test('a redirected page fails the export at once, naming DOCS_API_BASE_URL; not retried', async () => {
    const projectId = uniqueProject('page-301');
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'redirect' });
    const failure = await workflowFailure(
      stack.client.workflow.execute(visitorsExport, {
        taskQueue: DEFAULT_TASK_QUEUE,
        workflowId: `conformance-${projectId}`,
        args: [{ projectId, dateFrom: '2026-11-01', dateTo: '2026-11-02', concurrency: 1 }],
      }),
    );
    assert.equal(failure.type, 'VisitorsExportPageFailed');
    assert.match(
      failure.cause?.message ?? '',
      /getVisitors: redirected to https:\/\/.*set DOCS_API_BASE_URL/,
    );
    assert.equal(requestsOf(stack.sim, { projectId, route: 'getVisitors' }).length, 1);
  });

  test("a page refused with the service's error body fails the export with its message and details", async () => {
    const projectId = uniqueProject('page-400');
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'status', status: 400 });
    const failure = await workflowFailure(
      stack.client.workflow.execute(visitorsExport, {
        taskQueue: DEFAULT_TASK_QUEUE,
        workflowId: `conformance-${projectId}`,
        args: [{ projectId, dateFrom: '2026-11-01', dateTo: '2026-11-02' }],
      }),
    );
    assert.equal(failure.type, 'VisitorsExportPageFailed');
    const cause = failure.cause;
    assert.ok(cause);
    assert.match(cause.message, /invalid request: invalid query parameters \(injected HTTP 400\)/);
  });
});
