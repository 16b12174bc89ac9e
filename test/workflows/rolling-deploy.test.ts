import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { sendFollowUp, sendFollowUpAndWait } from '../../src/client/agent-job';
import { createVisitorsSchedule } from '../../src/client/schedule';
import { describeDeployment } from '../../src/client/setup';
import { startVisitorsExport } from '../../src/client/visitors-export';
import { BUDGET_LIMITER_WORKFLOW_TYPE } from '../../src/contract/budget';
import { visitorsScheduleId } from '../../src/contract/names';
import { addDays } from '../../src/contract/zone-days';
import { startWorkerProcess } from '../../dev/worker-process';
import { workflowBundlePath } from '../../dev/workflow-bundle';
import { useProcessStack } from '../helpers/stack';
import { fireNights, settledRuns } from '../helpers/nightly';
import {
  DEPLOYMENT_NAME,
  FAST_DRAINAGE,
  makeCurrent,
  runSetup,
  runsOf,
  runVersioning,
  taskBuildIds,
  versionEnv,
} from '../helpers/versioning';
import { eventually, projectWithJobs, startJob } from './agent-job-harness';

// A rolling deploy as the Temporal Worker Controller (or two hosts, one after the other) runs it: two replicas of
// v1 with work in flight, one of them killed with SIGKILL mid-deploy, v2 started and made current with
// `docs-agent setup --set-current`. Runs started before the switch finish on v1, runs started after it run on v2,
// the long-lived workflows move to v2 at their next continue-as-new, and nothing fails or is lost.
const PATHS = 1_200;
const stack = useProcessStack({
  name: 'rolling-deploy',
  workers: 2,
  workerEnv: versionEnv('v1'),
  temporal: { dynamicConfig: FAST_DRAINAGE },
  simulator: { analytics: { paths: PATHS } },
});

async function exportWhole(exportDir: string, projectId: string, range: string): Promise<void> {
  const dir = path.join(exportDir, projectId, range);
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as { rows: number };
  assert.equal(manifest.rows, PATHS, `${range}: every row`);
  const csv = await fs.readFile(path.join(dir, 'visitors.csv'), 'utf8');
  assert.equal(csv.trim().split('\n').length, PATHS + 1, `${range}: the file holds every row`);
}

test('a rolling deploy v1 -> v2 with work in flight fails nothing and loses nothing', async () => {
  const { env, sim, exportDir, workers } = stack;
  const { client } = env;
  const address = env.address;
  await makeCurrent(client, address, 'v1');

  // Before the switch, on v1: a nightly run, a slow export, a job that gets a follow-up.
  const nightlyProject = 'rolling-nightly';
  await createVisitorsSchedule(client, { projectId: nightlyProject, at: '02:00', timeZone: 'UTC' });
  await fireNights(client, nightlyProject, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
  await settledRuns(client, nightlyProject, 1);
  const slow = sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 400 });
  const before = await startVisitorsExport(client, {
    projectId: 'rolling-export',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: 20,
    concurrency: 2,
  });
  // The night of 11-03 starts on v1 and is still exporting when v2 becomes current.
  await fireNights(client, nightlyProject, '2026-11-03T01:00:00Z', '2026-11-03T03:00:00Z');
  const jobProject = projectWithJobs(sim, 'rolling-job', 40_000);
  const job = await startJob(client, { projectId: jobProject, prompt: 'Document the deploy' });
  await sendFollowUpAndWait(client, job.workflowId, { prompt: 'before the switch', messageId: 'm1' });

  // The deploy: v2 starts; one v1 replica dies; v2 becomes current.
  const v2 = startWorkerProcess({
    temporalAddress: address,
    service: sim,
    exportDir,
    env: { ...versionEnv('v2'), WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({ traced: false }) },
  });
  try {
    await v2.ready;
    assert.equal(await workers[1]?.kill('SIGKILL'), null, 'killed, not exited');
    const status = (await before.describe()).status.name;
    assert.equal(status, 'RUNNING', 'the export is in flight at the switch');
    await makeCurrent(client, address, 'v2');
    // What docs/upgrading.md tells operators to list: the runs that keep v1's workers up.
    await eventually(async () => {
      const open = await runsOf(
        client,
        `TemporalWorkerDeploymentVersion = '${DEPLOYMENT_NAME}:v1' AND ExecutionStatus = 'Running'`,
      );
      return open.some((run) => run.workflowId === before.workflowId) ? true : undefined;
    }, 'the v1 export listed as running on v1');
    sim.faults.remove(slow);

    // After the switch: a new export, more follow-ups (signal and update), the next night.
    const after = await startVisitorsExport(client, {
      projectId: 'rolling-export',
      dateFrom: '2026-11-02',
      dateTo: '2026-11-03',
      pageSize: 20,
      concurrency: 2,
    });
    await sendFollowUp(client, job.workflowId, { prompt: 'after the switch (signal)', messageId: 'm2' });
    await sendFollowUpAndWait(client, job.workflowId, {
      prompt: 'after the switch (update)',
      messageId: 'm3',
    });
    await fireNights(client, nightlyProject, '2026-11-04T01:00:00Z', '2026-11-04T03:00:00Z');

    const [beforeResult, afterResult, jobResult] = await Promise.all([
      before.result(),
      after.result(),
      job.result(),
    ]);
    const nights = await settledRuns(client, nightlyProject, 3, 180_000);

    // Nothing failed, nothing lost: whole exports, every follow-up delivered once and in order.
    assert.equal(beforeResult.rows, PATHS);
    assert.equal(afterResult.rows, PATHS);
    await exportWhole(exportDir, 'rolling-export', '2026-11-01_2026-11-02');
    await exportWhole(exportDir, 'rolling-export', '2026-11-02_2026-11-03');
    assert.equal(jobResult.status, 'completed');
    assert.deepEqual(
      jobResult.followUps.map((f) => f.messageId),
      ['m1', 'm2', 'm3'],
    );
    const messages = sim.requests().filter((r) => r.route === 'sendMessage' && r.projectId === jobProject);
    assert.equal(messages.length, 3, 'each follow-up sent once');
    assert.deepEqual(
      nights.map((n) => n.exported),
      [['2026-11-01'], ['2026-11-02'], ['2026-11-03']],
    );
    for (const day of ['2026-11-01', '2026-11-02', '2026-11-03']) {
      await exportWhole(exportDir, nightlyProject, `${day}_${addDays(day, 1)}`);
    }
    const failed = await runsOf(
      client,
      `ExecutionStatus != 'Running' AND ExecutionStatus != 'Completed' AND ExecutionStatus != 'ContinuedAsNew'`,
    );
    assert.deepEqual(failed, [], 'no run failed, timed out or was terminated');

    // Started before the switch: every task on v1. After it: on v2.
    assert.deepEqual(await taskBuildIds(client, before.workflowId), ['v1']);
    assert.deepEqual(await taskBuildIds(client, job.workflowId), ['v1']);
    assert.deepEqual(await runVersioning(client, before.workflowId), {
      buildId: 'v1',
      behavior: 'VERSIONING_BEHAVIOR_PINNED',
    });
    assert.deepEqual(await taskBuildIds(client, after.workflowId), ['v2']);
    const scheduled = await runsOf(client, `TemporalScheduledById = '${visitorsScheduleId(nightlyProject)}'`);
    const nightVersions = await Promise.all(
      scheduled
        .sort((a, b) => a.workflowId.localeCompare(b.workflowId))
        .map(async (run) => (await taskBuildIds(client, run.workflowId, run.runId)).join(',')),
    );
    assert.deepEqual(nightVersions, ['v1', 'v1', 'v2']);

    // The long-lived workflow (the limiter): on v2 since their first continue-as-new after the switch, pinned there.
    for (const type of [BUDGET_LIMITER_WORKFLOW_TYPE]) {
      const running = await runsOf(client, `WorkflowType = '${type}' AND ExecutionStatus = 'Running'`);
      assert.ok(running.length > 0, `${type} runs`);
      for (const run of running) {
        assert.deepEqual(await runVersioning(client, run.workflowId, run.runId), {
          buildId: 'v2',
          behavior: 'VERSIONING_BEHAVIOR_PINNED',
        });
      }
      const moved = await runsOf(client, `WorkflowType = '${type}' AND ExecutionStatus = 'ContinuedAsNew'`);
      assert.ok(moved.length > 0, `${type} continued as new onto v2`);
    }

    // v1 has nothing left: its workers can stop.
    await eventually(
      async () => {
        const deployment = await describeDeployment(client, DEPLOYMENT_NAME);
        return deployment.versions.find((v) => v.buildId === 'v1')?.status === 'drained' ? true : undefined;
      },
      'v1 drained',
      60_000,
    );
    const shown = await runSetup(address, ['--deployment-name', DEPLOYMENT_NAME, '--build-id', 'v2']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^ {2}v1: drained$/m);
    assert.match(shown.stdout, /^ {2}v2: current$/m);
  } finally {
    await v2.kill('SIGTERM');
  }
});
