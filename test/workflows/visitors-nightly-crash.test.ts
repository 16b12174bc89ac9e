import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createVisitorsSchedule } from '../../src/client/schedule';
import { describeVisitorsNightly } from '../../src/client/schedule';
import { visitorsExportWorkflowId } from '../../src/contract/names';
import { addDays } from '../../src/contract/zone-days';
import { startWorkerProcess } from '../../dev/worker-process';
import { useProcessStack } from '../helpers/stack';
import { fireNights, requestedRanges, settledRuns } from '../helpers/nightly';

// The stack's worker process is the one killed in the middle of a catch-up.
const stack = useProcessStack({ name: 'nightly-crash', simulator: { analytics: { paths: 30 } } });

test('the worker killed with SIGKILL mid catch-up: a new worker finishes it, each day exported once', async () => {
  const { env, sim, exportDir, worker: first } = stack;
  const projectId = 'catch-up';
  await createVisitorsSchedule(env.client, { projectId, at: '02:00', timeZone: 'UTC' });
  // The night of 11-02: 11-01 exported.
  await fireNights(env.client, projectId, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
  await settledRuns(env.client, projectId, 1);

  // The night of 11-09 catches up on 11-02 .. 11-08; each page takes 1.5 s.
  sim.faults.add({ route: 'getVisitors', projectId, kind: 'latency', latencyMs: 1_500 });
  await fireNights(env.client, projectId, '2026-11-09T01:00:00Z', '2026-11-09T03:00:00Z');
  const days = () => new Set(requestedRanges(sim.requests(), projectId)).size;
  while (days() < 4) await sleep(50);
  await first.kill('SIGKILL');
  const daysBeforeKill = days();

  const second = startWorkerProcess({ temporalAddress: env.address, service: sim, exportDir });
  try {
    await second.ready;
    const runs = await settledRuns(env.client, projectId, 2, 240_000);
    const expected = Array.from({ length: 7 }, (_, i) => addDays('2026-11-02', i));
    assert.deepEqual(runs[1]?.exported, expected);
    assert.equal(runs[1]?.wholeThrough, '2026-11-09T00:00:00.000Z');

    const ranges = requestedRanges(sim.requests(), projectId);
    assert.deepEqual(
      [...new Set(ranges)],
      ['2026-11-01', ...expected].map((day) => `${day}_${addDays(day, 1)}`),
    );
    // A page in flight when the worker died may be asked again (an idempotent GET); a day is not exported again.
    assert.ok(ranges.length <= 8 + 1, `at most one page asked twice: ${ranges.length} requests`);
    for (const day of expected) {
      const workflowId = visitorsExportWorkflowId(projectId, day, addDays(day, 1));
      let executions = 0;
      for await (const run of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
        assert.equal(run.status.name, 'COMPLETED');
        executions += 1;
      }
      assert.equal(executions, 1, `${day}: one export`);
      await fs.access(path.join(exportDir, projectId, `${day}_${addDays(day, 1)}`, 'manifest.json'));
    }
    assert.deepEqual((await describeVisitorsNightly(env.client, projectId)).missing, []);
    assert.ok(daysBeforeKill < 8, `killed mid catch-up (after ${daysBeforeKill} days were asked for)`);
  } finally {
    await second.kill('SIGTERM');
  }
});
