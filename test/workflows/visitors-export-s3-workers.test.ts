import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import { visitorsExport } from '../../src/workflows';
import { startProcessStack } from '../../dev/stack';
import { useS3Stack } from '../helpers/s3';

// Three worker processes with nothing on disk in common: EXPORT_DIR is the bucket, through the fault proxy.
const { s3, stack } = useS3Stack((server) =>
  startProcessStack({
    name: 'export-s3-workers',
    workers: 3,
    simulator: { analytics: { paths: 6_000 } },
    workerEnv: server.workerEnv('shared'),
  }),
);

async function objectText(key: string): Promise<string> {
  const answer = await s3().client.send(new GetObjectCommand({ Bucket: s3().bucket, Key: key }));
  return (await answer.Body?.transformToString('utf8')) ?? '';
}

test('three workers share an export to the bucket; one killed mid-pages, another mid-merge: the export is whole', async () => {
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

  // The worker that runs the merge, by the identity (`<pid>@<host>`) the server records for its attempt.
  let merging: number | undefined;
  while (merging === undefined) {
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    const merge = pending.find((a) => a.activityType?.name === 'mergeVisitorsExport' && a.lastWorkerIdentity);
    merging = merge ? Number(merge.lastWorkerIdentity?.split('@')[0]) : undefined;
    if (merging === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const mergingWorker = workers.find((w) => w.child.pid === merging);
  assert.ok(mergingWorker && mergingWorker !== first, `the merge runs on a live worker (pid ${merging})`);
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
  // Only the last attempt of an activity has its started event: the merge's is the one after the kill.
  const events = (await handle.fetchHistory()).events ?? [];
  const mergeScheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'mergeVisitorsExport',
  )?.eventId;
  const mergeStarted = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(mergeScheduled),
  );
  assert.equal(mergeStarted?.activityTaskStartedEventAttributes?.attempt, 2, 'the merge was taken over once');
});
