import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseApiDate } from '../../src/contract/api-dates';
import {
  addDays,
  carryOver,
  dayStart,
  rebuiltWatermark,
  REBUILD_GAP_DAYS,
} from '../../src/contract/zone-days';

const ZONES = ['UTC', 'America/Los_Angeles', 'Asia/Karachi', 'Europe/Paris'];
// Watermark days around each change: the US spring (03-08) and autumn (11-01) changes, Europe's (03-29, 10-25).
const WATERMARKS = ['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-27', '2026-03-28', '2026-03-29'];
const AUTUMN = ['2026-10-24', '2026-10-25', '2026-10-31', '2026-11-01', '2026-11-19'];
const HOUR = 3_600_000;

/** The instants [start, end) a day of a zone covers. */
function span(day: string, zone: string): [number, number] {
  return [dayStart(day, zone).instant, dayStart(addDays(day, 1), zone).instant];
}

describe('carryOver: a zone change leaves no gap and no overlap', () => {
  for (const from of ZONES) {
    for (const to of ZONES) {
      if (from === to) continue;
      test(`${from} → ${to}, across DST changes`, () => {
        for (const watermark of [...WATERMARKS, ...AUTUMN]) {
          const { watermark: next, bridge } = carryOver(from, watermark, to);
          const oldEnd = span(watermark, from)[1];
          const newStart = span(addDays(next, 1), to)[0];
          // The covered pieces, in order: old days up to the watermark, the bridge, new days from next + 1.
          const pieces: [number, number][] = [span(watermark, from)];
          if (bridge !== null) {
            const range: [number, number] = [
              parseApiDate(bridge.dateFrom) ?? NaN,
              parseApiDate(bridge.dateTo) ?? NaN,
            ];
            assert.ok(range[0] < range[1], `${watermark}: the bridge is not empty`);
            assert.ok(
              range[1] - range[0] < 24 * HOUR + HOUR,
              `${watermark}: the bridge is shorter than a day`,
            );
            pieces.push(range);
          }
          pieces.push(span(addDays(next, 1), to), span(addDays(next, 2), to));
          for (let i = 1; i < pieces.length; i++) {
            assert.equal(
              pieces[i]?.[0],
              pieces[i - 1]?.[1],
              `${from} ${watermark} → ${to} ${next}: piece ${i} starts where piece ${i - 1} ends`,
            );
          }
          assert.equal(
            bridge === null,
            oldEnd === newStart,
            `${watermark}: a bridge only when the zones differ there`,
          );
          // The new zone's day before its first whole day is not whole after the old coverage: it is not skipped.
          assert.ok(
            span(next, to)[0] < oldEnd,
            `${watermark}: ${to} ${next} starts before the old coverage ends`,
          );
        }
      });
    }
  }

  test('the issue: Los Angeles through 11-19, then UTC: 11-20T08:00Z → 11-21 is one range', () => {
    assert.deepEqual(carryOver('America/Los_Angeles', '2026-11-19', 'UTC'), {
      watermark: '2026-11-20',
      bridge: { dateFrom: '2026-11-20T00:00:00-08:00', dateTo: '2026-11-21T00:00:00+00:00' },
    });
  });

  test('to a zone whose day starts at the same instant: no bridge', () => {
    // Karachi and Yekaterinburg are both UTC+5 all year.
    assert.deepEqual(carryOver('Asia/Karachi', '2026-11-19', 'Asia/Yekaterinburg'), {
      watermark: '2026-11-19',
      bridge: null,
    });
  });
});

describe('rebuiltWatermark: a lost watermark from the days found exported', () => {
  test('nothing found: no watermark', () => {
    assert.deepEqual(rebuiltWatermark([]), { watermark: null, done: [], origin: null });
  });

  test('an unbroken run: its last day', () => {
    assert.deepEqual(rebuiltWatermark(['2026-11-03', '2026-11-01', '2026-11-02']), {
      watermark: '2026-11-03',
      done: [],
      origin: '2026-10-31',
    });
  });

  test('a failed day inside the stretch stays due: the watermark stops before it', () => {
    assert.deepEqual(rebuiltWatermark(['2026-11-18', '2026-11-19', '2026-11-21', '2026-11-22']), {
      watermark: '2026-11-19',
      done: ['2026-11-21', '2026-11-22'],
      origin: '2026-11-17',
    });
  });

  test(`a gap of more than ${REBUILD_GAP_DAYS} days: the older exports are before the nightly began`, () => {
    assert.deepEqual(rebuiltWatermark(['2026-03-01', '2026-11-20', '2026-11-21']), {
      watermark: '2026-11-21',
      done: [],
      origin: '2026-11-19',
    });
  });
});
