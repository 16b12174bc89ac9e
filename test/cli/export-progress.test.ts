import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportProgressLine } from '../../src/cli/export-commands';

const progress = { pagesDone: 57, rowsDone: 14_250, inFlight: 4, done: false };

test('the progress line states counts and rates, with no bar or percentage (the total is unknown)', () => {
  const base = { atMs: 1_000, pagesDone: 7, rowsDone: 1_750 };
  const line = exportProgressLine(progress, { base, nowMs: 21_000 });
  assert.equal(line, 'pages 57 · rows 14250 · 2.5 pages/s · 625.0 rows/s · in flight 4');
  assert.doesNotMatch(line, /[#%]/);
  // Under a second of watching there is no rate yet, rather than a made-up one.
  assert.equal(
    exportProgressLine(progress, { base, nowMs: 1_500 }),
    'pages 57 · rows 14250 · - pages/s · - rows/s · in flight 4',
  );
  assert.equal(
    exportProgressLine({ ...progress, waitingForBudgetUntil: '2026-11-24T14:05:09.000Z' }),
    'pages 57 · rows 14250 · in flight 4 · waiting for budget until 2026-11-24T14:05:09.000Z',
  );
});
