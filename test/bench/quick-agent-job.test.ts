import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { QUICK_FOLLOW_UP_LOAD } from '../../bench/concurrent-jobs';
import { QUICK_HISTORY } from '../../bench/history-events';
import { runBenchmarks, type BenchResults } from '../../bench/run';

// The agent job benchmarks of issue 17 in quick mode, as a smoke test (history per polled job, follow-up
// latency under load). `npm run bench -- --quick --only scale` (200 jobs, bounded cache) is left to the bench
// run: with it this file would pass the test timeout on a 2-core machine.

describe('agent job benchmarks, quick mode', () => {
  let results: BenchResults;
  let printed = '';

  before(async () => {
    results = await runBenchmarks({
      quick: true,
      record: false,
      only: ['history', 'followups'],
      print: (text) => (printed += text),
    });
  });

  test('prints the history and follow-up sections', () => {
    assert.match(printed, /## History per polled job\n/);
    assert.match(printed, /## Follow-up latency under load\n/);
  });

  test('history: the poll activity writes the same history whatever the number of polls', () => {
    const rows = results.history ?? [];
    assert.equal(rows.length, QUICK_HISTORY.jobSeconds.length);
    for (const row of rows) assert.ok(row.polls >= 2, `${row.code}: ${row.polls} polls`);
    assert.ok(
      rows.every((row) => row.events <= 40),
      JSON.stringify(rows),
    );
    assert.equal(new Set(rows.map((row) => row.events)).size, 1, 'the same history at every poll count');
  });

  for (const [name, options, rowsOf] of [
    ['follow-ups under load', QUICK_FOLLOW_UP_LOAD, () => results.followups],
  ] as const) {
    test(`${name}: every job completes, every follow-up is delivered`, () => {
      const [row] = rowsOf() ?? [];
      const scenario = options.scenarios[0];
      assert.ok(row && scenario);
      assert.equal(row.completed, scenario.jobs);
      assert.equal(row.followUpsDelivered, row.followUpsSignalled);
      assert.ok(row.polls >= scenario.jobs && row.followUpMaxMs >= row.followUpP50Ms, JSON.stringify(row));
    });
  }
});
