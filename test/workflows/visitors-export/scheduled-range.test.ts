import assert from 'node:assert/strict';
import { test } from 'node:test';
import { previousDayRange } from '../../../src/workflows/visitors-export/scheduled-range';

// The workflow runs this in Temporal's sandbox (V8's Intl, the same ICU data); test/client/schedules.test.ts runs
// it there through real schedules. These cases pin the calendar arithmetic.
const cases: { name: string; zone: string; nominal: string; dateFrom: string; dateTo: string }[] = [
  { name: 'UTC', zone: 'UTC', nominal: '2026-11-10T02:00:00Z', dateFrom: '2026-11-09', dateTo: '2026-11-10' },
  {
    name: '01:00 in Auckland is noon UTC the day before',
    zone: 'Pacific/Auckland',
    nominal: '2026-11-09T12:00:00Z',
    dateFrom: '2026-11-09',
    dateTo: '2026-11-10',
  },
  {
    name: '23:30 in New York is 04:30 UTC the next day',
    zone: 'America/New_York',
    nominal: '2026-11-11T04:30:00Z',
    dateFrom: '2026-11-09',
    dateTo: '2026-11-10',
  },
  {
    name: 'the night Paris leaves summer time (02:30 CEST)',
    zone: 'Europe/Paris',
    nominal: '2026-10-25T00:30:00Z',
    dateFrom: '2026-10-24',
    dateTo: '2026-10-25',
  },
  {
    name: 'the night New York starts summer time (03:30 EDT)',
    zone: 'America/New_York',
    nominal: '2026-03-08T07:30:00Z',
    dateFrom: '2026-03-07',
    dateTo: '2026-03-08',
  },
  {
    name: 'midnight sharp across a year boundary in Tokyo',
    zone: 'Asia/Tokyo',
    nominal: '2025-12-31T15:00:00Z',
    dateFrom: '2025-12-31',
    dateTo: '2026-01-01',
  },
  {
    name: 'after a leap day',
    zone: 'UTC',
    nominal: '2028-03-01T00:10:00Z',
    dateFrom: '2028-02-29',
    dateTo: '2028-03-01',
  },
];

for (const { name, zone, nominal, dateFrom, dateTo } of cases) {
  test(`previous day of the nominal time: ${name}`, () => {
    assert.deepEqual(previousDayRange(new Date(nominal), zone), { dateFrom, dateTo });
  });
}
