import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { QUICK_JOBS } from '../../bench/concurrent-jobs';
import { QUICK_EXPORT } from '../../bench/export-throughput';
import { QUICK_POLLING } from '../../bench/polling-efficiency';
import { MEMORY_VARIANTS, QUICK_MEMORY } from '../../bench/workflow-memory';
import { PROJECT_MODULES } from '../../bench/lib/cached-workflow-heap';
import { median } from '../../bench/lib/stats';
import { runBenchmarks, type BenchName, type BenchResults } from '../../bench/run';

// `npm run bench -- --quick` as a smoke test: every benchmark runs on real parts (dev server, simulator, worker
// process), prints its tables, and its figures make sense. Timings are not asserted (shared machines). The agent
// job benchmarks of issue 17 run in quick-agent-job.test.ts, so that each file stays within the test timeout.

const SERVICE_AND_WORKER_BENCHES: BenchName[] = ['export', 'jobs', 'memory', 'polling', 'start', 'budgets'];

/** Data rows of every markdown table in a section, as cells. */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| ---'))
    .map((line) =>
      line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.trim()),
    )
    .filter((cells) => /^(\d|\*\*|prebuilt|bundled|idle|`agentJob`)/.test(cells[0] ?? ''));
}

const leadingNumber = (cell: string | undefined): number => Number.parseFloat((cell ?? '').replace(/,/g, ''));

describe('benchmarks, quick mode', () => {
  let results: BenchResults;
  let printed = '';

  before(async () => {
    const started = performance.now();
    results = await runBenchmarks({
      quick: true,
      record: false,
      only: SERVICE_AND_WORKER_BENCHES,
      print: (text) => (printed += text),
    });
    // Reported, not asserted: the quick mode is meant to stay near a minute, on a machine that may be busy.
    console.log(`quick benchmarks: ${((performance.now() - started) / 1000).toFixed(1)} s`, results.seconds);
  });

  test('prints one section per benchmark, with the command, machine and versions', () => {
    for (const title of [
      'Export throughput',
      'Concurrent agent jobs',
      'Memory per cached workflow',
      'Polling efficiency',
      'Worker start',
      'Budgets',
    ]) {
      assert.match(printed, new RegExp(`## ${title}\\n`));
    }
    for (const section of Object.values(results.markdown)) {
      assert.match(section, /Command: `npm run bench -- --quick --only \w+`/);
      assert.match(section, /Machine: .+, \d+ cores, [\d.]+ GiB RAM/);
      assert.match(section, /Versions: node v\d+.+temporal version/);
    }
  });

  test('export throughput: every variant writes every row; the workflow is no faster than the ideal bound', () => {
    const rows = results.export ?? [];
    assert.deepEqual(
      rows.map((row) => row.concurrency),
      QUICK_EXPORT.concurrencies,
    );
    for (const row of rows) {
      assert.equal(row.pages, QUICK_EXPORT.paths / 250);
      for (const counts of [row.fileRows.workflow, row.fileRows.plainSame, row.fileRows.plainSequential]) {
        assert.deepEqual(counts, Array<number>(QUICK_EXPORT.repeats).fill(QUICK_EXPORT.paths));
      }
      assert.ok(row.workflowSeconds.every((s) => s >= row.idealSeconds));
      assert.ok([...row.plainSameSeconds, ...row.plainSequentialSeconds].every((s) => s >= row.idealSeconds));
      assert.ok(
        // A fixed cost (start, input check, staging, permits, merge) and at most 4 events a page: rows never.
        row.historyEvents.every((events) => events > 10 && events < 120 + row.pages * 4),
        `page activities in history: ${row.historyEvents.join(', ')} events for ${row.pages} pages`,
      );
      assert.ok(row.historyBytes.every((bytes) => bytes > 1000));
      assert.ok(row.workerPeakMiB > 20, `worker RSS ${row.workerPeakMiB}`);
      assert.ok((row.profile?.pageRunMs ?? 0) >= QUICK_EXPORT.latencyMs, 'a page takes at least the latency');
    }
    const table = tableRows(results.markdown.export ?? '');
    assert.deepEqual(
      table.slice(0, rows.length).map((cells) => cells.slice(0, 2)),
      rows.map((row) => [String(row.concurrency), String(row.pages)]),
    );
    const [main, profile, atBudget] = [
      table.slice(0, rows.length),
      table.slice(rows.length, 2 * rows.length),
      table.slice(2 * rows.length),
    ];
    for (const cells of main)
      assert.ok(
        cells.slice(2).every((cell) => leadingNumber(cell) > 0),
        cells.join('|'),
      );
    assert.equal(profile.length, rows.length, 'one profile row per concurrency');
    // The service's own budget: every page read, no 429, at most one request past the end per run in flight
    // beside the last page's, and page 0 read again at the end (the end check).
    const budgetRow = results.exportAtServiceBudget;
    assert.ok(budgetRow);
    assert.equal(atBudget.length, 1, 'one row at the service budget');
    assert.equal(budgetRow.refusals, 0);
    for (const requests of budgetRow.workflowRequests) {
      assert.ok(
        requests >= budgetRow.options.pages &&
          requests <= budgetRow.options.pages + budgetRow.options.concurrency,
        `${requests} requests for ${budgetRow.options.pages} pages`,
      );
    }
    for (const cells of profile)
      assert.ok(
        cells.every((cell) => cell === '-' || leadingNumber(cell) >= 0),
        cells.join('|'),
      );
    assert.match(
      results.markdown.export ?? '',
      /Target \(within 1.25 x the ideal bound at concurrency 8\): not run/,
    );
  });

  test('concurrent jobs: all complete, every follow-up delivered, worker RSS, CPU and lags measured', () => {
    const [row] = results.jobs ?? [];
    assert.ok(row);
    assert.equal(row.jobs, QUICK_JOBS.scenarios[0]?.jobs);
    assert.equal(row.completed, row.jobs);
    assert.equal(row.followUpsSignalled, QUICK_JOBS.scenarios[0]?.followUps);
    assert.equal(row.followUpsDelivered, row.followUpsSignalled);
    assert.ok(row.allActiveAtOnce);
    assert.ok(row.polls >= row.jobs, `${row.polls} polls`);
    assert.ok(row.followUpP99Ms >= row.followUpP50Ms && row.followUpP50Ms > -50);
    assert.ok(row.detectionP50Ms > 0 && row.detectionP99Ms >= row.detectionP50Ms, `${row.detectionP50Ms} ms`);
    assert.ok(row.workerCpuSeconds > 0 && row.workerPeakMiB >= row.workerIdleMiB && row.workerIdleMiB > 20);
    const table = tableRows(results.markdown.jobs ?? '');
    assert.equal(table.length, 1);
    assert.equal(table[0]?.[0], String(QUICK_JOBS.scenarios[0]?.jobs));
  });

  test('memory: the workflows of every variant ran a workflow task on the worker, whose RSS was read', () => {
    const rows = results.memory ?? [];
    assert.deepEqual(
      rows.map((row) => row.variant),
      MEMORY_VARIANTS,
    );
    for (const row of rows) {
      assert.equal(row.workflows, QUICK_MEMORY.workflows);
      assert.equal(row.perWorkflowKiB.length, QUICK_MEMORY.repeats);
      assert.ok(
        [...row.idleMiB, ...row.loadedMiB].every((mib) => mib > 20),
        JSON.stringify(row),
      );
    }
    const [sdkOnly, withZod, inProject] = rows.map((row) => row.bundleBytes);
    // The project's workflows evaluate no zod (issue 17), so only "with zod" must outgrow the SDK by zod's size.
    assert.ok(
      (sdkOnly ?? 0) < (withZod ?? 0) && (sdkOnly ?? 0) < (inProject ?? 0),
      'bundles outgrow the SDK',
    );
    assert.equal(tableRows(results.markdown.memory ?? '').length, rows.length);
  });

  test("memory: a heap snapshot attributes each variant's cached workflow, the agent job's own modules included", () => {
    const rows = results.memory ?? [];
    for (const row of rows) assert.equal(row.afterGc.length, QUICK_MEMORY.repeats);
    const floor = rows[0]?.heap;
    const agentJob = rows.find((row) => row.variant.workflow === 'agentJob')?.heap;
    assert.ok(floor && agentJob, 'both the floor and agentJob were found in the workflow thread snapshot');
    assert.equal(agentJob.workflowType, 'agentJob');
    // The floor's entry module is a workflow of a few lines; the agent job's holds this project's modules.
    const projectModules = (heap: typeof floor) => heap.parts.get(PROJECT_MODULES) ?? 0;
    assert.ok(projectModules(agentJob) > 2 * projectModules(floor), JSON.stringify([...agentJob.parts]));
    assert.ok(agentJob.retainedBytes > floor.retainedBytes);
    const parts = [...agentJob.parts.values()].reduce((sum, bytes) => sum + bytes, 0);
    assert.ok(Math.abs(parts - agentJob.retainedBytes) < agentJob.retainedBytes * 0.1, 'the parts add up');
    assert.match(results.markdown.memory ?? '', /\| retained per workflow, in all \(median\) \|/);
  });

  test('polling: both pollers see every job done, near the computed schedule', () => {
    const rows = results.polling ?? [];
    assert.deepEqual(
      rows.map((row) => row.jobMinutes),
      QUICK_POLLING.jobs.map((job) => job.minutes),
    );
    for (const row of rows) {
      for (const poller of [row.backoff, row.fixed]) {
        assert.ok(poller.polls >= 1 && poller.modelPolls >= 1, JSON.stringify(row));
        assert.ok(poller.lagS >= 0 && poller.closeLagS >= poller.lagS, JSON.stringify(row));
        assert.ok(Math.abs(poller.polls - poller.modelPolls) <= 2, JSON.stringify(row));
        // Polls are the poll activity's attempts, which history does not record: bounded, whatever the count.
        assert.ok(poller.historyEvents <= 60, `${poller.historyEvents} events for ${poller.polls} polls`);
      }
      assert.ok(
        row.backoff.polls >= row.fixed.polls,
        'the backoff ramps up: more polls than the fixed poller',
      );
    }
    assert.equal(tableRows(results.markdown.polling ?? '').length, rows.length + 3);
  });

  test('worker start: both variants become ready; bundling at start is the slower', () => {
    const start = results.start;
    assert.ok(start);
    // Medians of three: one start of each, beside other test files on two cores, came out either way.
    assert.ok(median(start.prebuiltSeconds) > 0);
    assert.ok(median(start.bundledSeconds) > median(start.prebuiltSeconds), JSON.stringify(start));
    assert.equal(tableRows(results.markdown.start ?? '').length, 2);
  });
});
