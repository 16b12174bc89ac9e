import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { startVisitorsExport } from '../../src/client/visitors-export';
import { routeToVersion } from '../../src/client/setup';
import type { VisitorsExportResult } from '../../src/contract/visitors-export';
import { startTestWorker, type TestWorker } from '../../dev/worker';
import { useStack } from '../helpers/stack';
import { DEPLOYMENT_NAME, runSetup, runVersioning, taskBuildIds, versionPolled } from '../helpers/versioning';
import { projectWithJobs, startJob } from './agent-job-harness';

// In-process workers on one dev server. The stack's worker is unversioned on the default task queue (as every
// deployment without TEMPORAL_DEPLOYMENT_NAME runs); the versioned ones take their own task queue.
const PATHS = 600;
const stack = useStack({ name: 'versioned-workers', simulator: { analytics: { paths: PATHS } } });
const VERSIONED_QUEUE = 'docs-agent-versioned';

async function rowsOf(dir: string, range: string, projectId: string): Promise<number> {
  const manifest = path.join(dir, projectId, range, 'manifest.json');
  return (JSON.parse(await fs.readFile(manifest, 'utf8')) as { rows: number }).rows;
}

describe('Worker Versioning', () => {
  test('unversioned (neither variable set): runs as before, no version recorded', async () => {
    const { client, sim, exportDir } = stack;
    const exportRun = await startVisitorsExport(client, {
      projectId: 'unversioned',
      dateFrom: '2026-11-01',
      dateTo: '2026-11-02',
      pageSize: 100,
    });
    const job = await startJob(client, {
      projectId: projectWithJobs(sim, 'unversioned-job', 500),
      prompt: 'Stay unversioned',
    });
    assert.equal((await exportRun.result()).rows, PATHS);
    assert.equal((await job.result()).status, 'completed');
    assert.equal(await rowsOf(exportDir, '2026-11-01_2026-11-02', 'unversioned'), PATHS);
    for (const workflowId of [exportRun.workflowId, job.workflowId]) {
      assert.deepEqual(await taskBuildIds(client, workflowId), ['unversioned']);
      assert.equal((await runVersioning(client, workflowId)).buildId, undefined);
    }
  });

  test('an incompatible v2 (it stages where v1 cannot read): no pinned export fails', async () => {
    const { env, client, sim } = stack;
    const service = { url: sim.url, apiKey: sim.apiKey };
    const dirV1 = await fs.mkdtemp(path.join(os.tmpdir(), 'versioned-v1-'));
    const dirV2 = await fs.mkdtemp(path.join(os.tmpdir(), 'versioned-v2-'));
    const workers: TestWorker[] = [];
    const start = async (buildId: string, exportDir: string): Promise<void> => {
      const deploymentVersion = { deploymentName: DEPLOYMENT_NAME, buildId };
      workers.push(
        await startTestWorker(env, { service, exportDir, taskQueue: VERSIONED_QUEUE, deploymentVersion }),
      );
      await versionPolled(client, buildId);
      assert.equal(await routeToVersion(client, deploymentVersion), 'changed');
    };
    const exportDay = (projectId: string, day: number) =>
      startVisitorsExport(
        client,
        {
          projectId,
          dateFrom: `2026-11-0${day}`,
          dateTo: `2026-11-0${day + 1}`,
          pageSize: 20,
          concurrency: 2,
        },
        { taskQueue: VERSIONED_QUEUE },
      );
    try {
      // Each v1 export pages slowly: when v2 becomes current, every one of them is mid-way.
      sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 250 });
      await start('v1', dirV1);
      const onV1 = await Promise.all([1, 2, 3].map((day) => exportDay('pinned', day)));
      // Routing to a version none of whose workers polled yet is refused, and says what to do.
      const early = await runSetup(env.address, [
        '--deployment-name',
        DEPLOYMENT_NAME,
        '--build-id',
        'v2',
        '--set-current',
      ]);
      assert.equal(early.code, 1, early.stderr);
      assert.match(early.stdout, /no worker of version v2 has polled yet: start them/);
      await start('v2', dirV2);
      for (const handle of onV1) assert.equal((await handle.describe()).status.name, 'RUNNING');
      const onV2 = await Promise.all([4, 5].map((day) => exportDay('pinned', day)));

      const results: VisitorsExportResult[] = await Promise.all([...onV1, ...onV2].map((h) => h.result()));
      assert.deepEqual(
        results.map((r) => r.rows),
        [PATHS, PATHS, PATHS, PATHS, PATHS],
      );
      for (const [i, handle] of onV1.entries()) {
        assert.deepEqual(await taskBuildIds(client, handle.workflowId), ['v1']);
        assert.equal(await rowsOf(dirV1, `2026-11-0${i + 1}_2026-11-0${i + 2}`, 'pinned'), PATHS);
      }
      for (const handle of onV2) assert.deepEqual(await taskBuildIds(client, handle.workflowId), ['v2']);
      // v2 wrote nothing of a v1 export: a v1 page staged by v2 would have failed that export's merge.
      const visible = (await fs.readdir(dirV2)).filter((name) => !name.startsWith('.'));
      assert.deepEqual(visible, ['pinned']);
      assert.deepEqual((await fs.readdir(path.join(dirV2, 'pinned'))).sort(), [
        '2026-11-04_2026-11-05',
        '2026-11-05_2026-11-06',
      ]);
    } finally {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await Promise.all([dirV1, dirV2].map((dir) => fs.rm(dir, { recursive: true, force: true })));
    }
  });
});
