import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import { visitorsExport } from '../../src/workflows';
import { startProcessStack } from '../../dev/stack';
import { useS3Stack } from '../helpers/s3';

// Four worker processes with nothing on disk in common: EXPORT_DIR is the bucket, through the fault proxy.
const { s3, stack } = useS3Stack((server) =>
  startProcessStack({
    name: 'export-s3-workers',
    workers: 4,
    simulator: { analytics: { paths: 6_000 } },
    workerEnv: server.workerEnv('shared'),
  }),
);

/** The worker running the activity, by the identity (`<pid>@<host>`) the server records for its attempt. */
async function workerRunning(handle: WorkflowHandle, activityType: string) {
  const { workers } = stack();
  for (;;) {
    const { status, raw } = await handle.describe();
    assert.equal(status.name, 'RUNNING', `the export waits for ${activityType}`);
    const pending = raw.pendingActivities ?? [];
    const identity = pending.find((a) => a.activityType?.name === activityType)?.lastWorkerIdentity;
    const worker = workers.find((w) => identity && w.child.pid === Number(identity.split('@')[0]));
    if (worker) return worker;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Only the last attempt of an activity has its started event (and the failure of the attempt before it). */
async function lastAttemptOf(handle: WorkflowHandle, activityType: string) {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  )?.eventId;
  return events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled),
  )?.activityTaskStartedEventAttributes;
}

async function objectText(key: string): Promise<string> {
  const answer = await s3().client.send(new GetObjectCommand({ Bucket: s3().bucket, Key: key }));
  return (await answer.Body?.transformToString('utf8')) ?? '';
}

test('workers share an export to the bucket; one killed mid-pages, another mid-merge: the export is whole', async () => {
  const { env, sim, workers } = stack();
  sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 100 });
  // The merge reads each staged object (a page, or a chunk of up to 16) over HTTP: slowed down, it runs long
  // enough to be killed in the middle.
  s3().proxy.add({
    kind: 'latency',
    latencyMs: 400,
    times: Infinity,
    match: (r) => r.method === 'GET' && /\.staging\/.+\/(?:page|chunk)-[\d-]+\.ndjson$/.test(r.path),
  });
  const input = {
    projectId: 'shared',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: 100,
    concurrency: 4,
  };
  const handle = await env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(input.projectId, input.dateFrom, input.dateTo),
    args: [input],
  });

  const pages = () => sim.requests().filter((r) => r.route === 'getVisitors').length;
  while (pages() < 15) await new Promise((resolve) => setTimeout(resolve, 50));
  const [first] = workers;
  await first?.kill('SIGKILL');

  const mergingWorker = await workerRunning(handle, 'mergeVisitorsExport');
  assert.notEqual(mergingWorker, first, 'the merge runs on a live worker');
  await mergingWorker.kill('SIGKILL');

  const result = await handle.result();
  assert.equal(result.rows, 6_000);
  const folder = 'shared/shared/2026-11-01_2026-11-02';
  const csv = await objectText(`${folder}/visitors.csv`);
  const paths = csv.trim().split('\n').slice(1);
  assert.equal(paths.length, 6_000, 'no missing row');
  assert.equal(new Set(paths).size, 6_000, 'no duplicate row');
  const manifest = JSON.parse(await objectText(`${folder}/manifest.json`)) as VisitorsExportManifest;
  assert.equal(manifest.sha256, createHash('sha256').update(csv).digest('hex'));
  const left = await s3().client.send(new ListObjectsV2Command({ Bucket: s3().bucket, Prefix: 'shared/' }));
  assert.deepEqual(
    (left.Contents ?? []).map((o) => o.Key).sort(),
    [`${folder}/manifest.json`, `${folder}/totals.json`, `${folder}/visitors.csv`],
    'no staged page left',
  );
  const merge = await lastAttemptOf(handle, 'mergeVisitorsExport');
  assert.equal(merge?.attempt, 2, 'the merge was taken over once');
});

test('the worker killed while it probes the bucket: another takes the probe over after its heartbeat timeout', async () => {
  const { env } = stack();
  // The probe's first write hangs for longer than the heartbeat timeout: the kill lands in the middle of it.
  s3().proxy.add({
    kind: 'latency',
    latencyMs: 30_000,
    match: (r) => r.method === 'PUT' && /\/\.probe-[0-9a-f]+$/.test(r.path),
  });
  const input = { projectId: 'probe', dateFrom: '2026-11-01', dateTo: '2026-11-02', pageSize: 250 };
  const handle = await env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(input.projectId, input.dateFrom, input.dateTo),
    args: [input],
  });
  const probingWorker = await workerRunning(handle, 'prepareVisitorsExportStaging');
  await probingWorker.kill('SIGKILL');

  // Without a heartbeat timeout the server would wait out the activity's 5-minute start-to-close timeout.
  const result = await handle.result();
  assert.equal(result.rows, 6_000);
  const prepareStarted = await lastAttemptOf(handle, 'prepareVisitorsExportStaging');
  assert.equal(prepareStarted?.attempt, 2, 'the probe was taken over once');
  assert.equal(
    prepareStarted?.lastFailure?.timeoutFailureInfo?.timeoutType,
    temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    'the killed attempt ended by its heartbeat timeout',
  );
});
