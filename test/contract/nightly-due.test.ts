import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseApiDate } from '../../src/contract/api-dates';
import { exportLabel, mergeCovered, type Covered } from '../../src/contract/nightly';
import { dueExports, NIGHTLY_LOOK_BACK_DAYS } from '../../src/contract/nightly';
import { addDays, dayStart } from '../../src/contract/zone-days';

const ZONES = ['UTC', 'America/Los_Angeles', 'Asia/Karachi', 'Europe/Paris'];
// Last days of the old zone around each change: the US spring (03-08) and autumn (11-01) changes, Europe's.
const LAST_OLD_DAYS = [
  '2026-03-07',
  '2026-03-08',
  '2026-03-28',
  '2026-03-29',
  '2026-10-24',
  '2026-10-25',
  '2026-11-01',
];

/** The instants a day of a zone covers. */
function span(day: string, zone: string): Covered {
  return { from: dayStart(day, zone).instant, to: dayStart(addDays(day, 1), zone).instant };
}

const days = (first: string, count: number, zone: string): Covered[] =>
  Array.from({ length: count }, (_, i) => span(addDays(first, i), zone));

describe('dueExports: what a nightly run owes, from the instants whole exports hold', () => {
  test('a first night owes only the day before it', () => {
    assert.deepEqual(dueExports([], 'UTC', '2026-11-04').map(exportLabel), ['2026-11-04']);
  });

  test('every day since the first whole one without a whole export, oldest first; a second fire owes nothing', () => {
    const held = [span('2026-11-01', 'UTC'), span('2026-11-03', 'UTC')];
    assert.deepEqual(dueExports(held, 'UTC', '2026-11-05').map(exportLabel), [
      '2026-11-02',
      '2026-11-04',
      '2026-11-05',
    ]);
    assert.deepEqual(dueExports(days('2026-11-01', 5, 'UTC'), 'UTC', '2026-11-05'), []);
  });

  test(`the look-back is ${NIGHTLY_LOOK_BACK_DAYS} days: an older missing day is left to schedule backfill`, () => {
    // Exported whole up to 06-30, then paused until 11-06: the look-back, not more, is due.
    const due = dueExports([], 'UTC', '2026-11-05', true);
    assert.equal(due[0]?.dateFrom, addDays('2026-11-05', 1 - NIGHTLY_LOOK_BACK_DAYS));
    assert.equal(due.length, NIGHTLY_LOOK_BACK_DAYS);
  });

  test('the spring change in Paris: the run after the skipped night owes both days', () => {
    const due = dueExports(days('2026-03-26', 2, 'Europe/Paris'), 'Europe/Paris', '2026-03-29');
    assert.deepEqual(due.map(exportLabel), ['2026-03-28', '2026-03-29']);
    assert.equal(due[1]?.to, Date.parse('2026-03-29T22:00:00Z'));
  });

  for (const from of ZONES) {
    for (const to of ZONES) {
      if (from === to) continue;
      test(`zone change ${from} → ${to} across DST changes: no gap, no overlap, nothing unended`, () => {
        for (const last of LAST_OLD_DAYS) {
          const held = days(addDays(last, -2), 3, from);
          // The first night of the new zone, and the night after it.
          for (const nights of [1, 2]) {
            const end = held.at(-1)?.to ?? NaN;
            const through = addDays(new Date(end).toISOString().slice(0, 10), nights - 1);
            const due = dueExports(held, to, through);
            const nominalEnd = span(through, to).to;
            const pieces = mergeCovered([...held, ...due]);
            for (const item of due) {
              assert.ok(item.to <= nominalEnd, `${last} ${through}: ${exportLabel(item)} has ended`);
              assert.ok(
                !held.some((c) => c.from < item.to && item.from < c.to),
                `${exportLabel(item)} held already`,
              );
              if (item.timeZone !== undefined) continue;
              assert.equal(parseApiDate(item.dateFrom), item.from);
              assert.equal(parseApiDate(item.dateTo), item.to);
            }
            const overlap = [...held, ...due].reduce((total, c) => total + c.to - c.from, 0);
            assert.equal(pieces.length, 1, `${from} ${last} → ${to} ${through}: one unbroken span`);
            assert.equal(overlap, (pieces[0]?.to ?? 0) - (pieces[0]?.from ?? 0), 'each instant once');
          }
        }
      });
    }
  }

  test('the issue: Los Angeles through 11-19, then UTC: 11-20T08:00Z → 11-21 is one range, then the UTC days', () => {
    const held = days('2026-11-18', 2, 'America/Los_Angeles');
    const due = dueExports(held, 'UTC', '2026-11-21');
    assert.deepEqual(
      due.map((d) => [d.dateFrom, d.dateTo, d.timeZone]),
      [
        ['2026-11-20T08:00:00+00:00', '2026-11-21T00:00:00+00:00', undefined],
        ['2026-11-21', '2026-11-22', 'UTC'],
      ],
    );
  });

  test('issue 45 case 5: Los Angeles → Karachi, triggered before the hours between have ended: nothing yet', () => {
    // LA 11-26 ends at 11-27T08:00Z; a trigger at 11-27T10:00Z is in Karachi's 11-27 (through 11-26).
    const held = days('2026-11-24', 3, 'America/Los_Angeles');
    assert.deepEqual(dueExports(held, 'Asia/Karachi', '2026-11-26'), []);
    // The next night (through 11-27, which ends at 11-27T19:00Z): the hours after LA's last day, as one range.
    assert.deepEqual(dueExports(held, 'Asia/Karachi', '2026-11-27').map(exportLabel), [
      '2026-11-27T13:00:00+05:00_2026-11-28T00:00:00+05:00',
    ]);
  });

  test('a missing day of the old zone after a zone change is exported as the hours no day fits', () => {
    // LA 11-18 and 11-20 whole, 11-19 failed; then UTC.
    const held = [span('2026-11-18', 'America/Los_Angeles'), span('2026-11-20', 'America/Los_Angeles')];
    const due = dueExports(held, 'UTC', '2026-11-22');
    assert.deepEqual(due.map(exportLabel), [
      '2026-11-19T08:00:00+00:00_2026-11-20T08:00:00+00:00',
      '2026-11-21T08:00:00+00:00_2026-11-22T00:00:00+00:00',
      '2026-11-22',
    ]);
  });
});
