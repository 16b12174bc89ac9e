import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { concurrentJobs, QUICK_JOBS } from '../../bench/concurrent-jobs';
import { exportThroughput, QUICK_EXPORT } from '../../bench/export-throughput';
import { computedComparison, modelCheck, QUICK_POLLING } from '../../bench/polling-efficiency';
import { workerStart } from '../../bench/worker-start';

// The benchmarks' quick mode as a smoke test: each runs on real parts and its figures make sense. Timings are
// not asserted (shared machines); bench/ measures them.

describe('benchmarks, quick mode', () => {
  test('export throughput: every variant exports every row; the workflow is no faster than the ideal bound', async () => {
    const rows = await exportThroughput(QUICK_EXPORT);
    assert.deepEqual(
      rows.map((row) => row.concurrency),
      QUICK_EXPORT.concurrencies,
    );
    for (const row of rows) {
      assert.ok(
        row.rows.every((count) => count === QUICK_EXPORT.rows),
        `rows: ${row.rows.join(', ')}`,
      );
      assert.ok(row.workflowSeconds.every((s) => s >= row.idealSeconds));
      assert.ok(row.historyEvents > row.pages, 'at least one event per page');
      assert.ok(row.workerPeakMiB > 20);
    }
  });

  test('concurrent jobs: all complete, follow-ups delivered, lags measured', async () => {
    const [row] = await concurrentJobs(QUICK_JOBS);
    assert.ok(row);
    assert.equal(row.completed, QUICK_JOBS.sizes[0]);
    assert.equal(row.followUpsDelivered, QUICK_JOBS.followUps);
    assert.ok(row.followUpP50Ms >= 0 && row.followUpP99Ms >= row.followUpP50Ms);
    assert.ok(row.detectionP50Ms > -1000, `detection lag ${row.detectionP50Ms} ms`);
    assert.ok(row.workerCpuSeconds > 0 && row.workerPeakMiB > 20);
  });

  test('polling: the real workflow polls as the model computes', async () => {
    const computed = computedComparison(QUICK_POLLING.jobMinutes);
    assert.ok(computed.every((row) => row.backoffLagS <= 120 && row.fixedLagS <= 120));
    const checks = await modelCheck(QUICK_POLLING.checkSeconds);
    for (const check of checks) {
      assert.ok(Math.abs(check.measuredPolls - check.computedPolls) <= 1, JSON.stringify(check));
    }
  });

  test('worker start: both variants become ready', async () => {
    const result = await workerStart(1);
    assert.equal(result.prebuiltSeconds.length, 1);
    assert.ok((result.prebuiltSeconds[0] ?? 0) > 0 && (result.bundledSeconds[0] ?? 0) > 0);
  });
});
