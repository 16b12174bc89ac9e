import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseApiDate } from '../../src/contract/api-dates';
import { addDays, dayBefore, localDayOf } from '../../src/contract/zone-days';
import { zoneRange } from '../../src/workflows/visitors-export/workflow';

type DateRange = { dateFrom: string; dateTo: string };

/** The day a nightly run at `nominal` exports last: the day before, as the service is sent it. */
function previousDay(nominal: Date, zone: string): DateRange & { requestRange?: DateRange } {
  const [dateFrom, dateTo] = [dayBefore(nominal, zone), localDayOf(nominal, zone)];
  const requestRange = zoneRange(dateFrom, dateTo, zone);
  return { dateFrom, dateTo, ...(requestRange === undefined ? {} : { requestRange }) };
}

// The workflow runs this in Temporal's sandbox (V8's Intl, the same ICU data); test/client/schedule.test.ts runs
// it there through real schedules. These cases pin the calendar arithmetic.
// `requested` is what the service is sent (it reads a bare date as midnight UTC); `hours` how long that day is.
const cases: {
  name: string;
  zone: string;
  nominal: string;
  dateFrom: string;
  dateTo: string;
  requested?: DateRange;
  hours?: number;
}[] = [
  { name: 'UTC', zone: 'UTC', nominal: '2026-11-10T02:00:00Z', dateFrom: '2026-11-09', dateTo: '2026-11-10' },
  {
    name: '01:00 in Auckland is noon UTC the day before',
    zone: 'Pacific/Auckland',
    nominal: '2026-11-09T12:00:00Z',
    dateFrom: '2026-11-09',
    dateTo: '2026-11-10',
    requested: { dateFrom: '2026-11-09T00:00:00+13:00', dateTo: '2026-11-10T00:00:00+13:00' },
    hours: 24,
  },
  {
    name: '23:30 in New York is 04:30 UTC the next day',
    zone: 'America/New_York',
    nominal: '2026-11-11T04:30:00Z',
    dateFrom: '2026-11-09',
    dateTo: '2026-11-10',
    requested: { dateFrom: '2026-11-09T00:00:00-05:00', dateTo: '2026-11-10T00:00:00-05:00' },
    hours: 24,
  },
  {
    name: 'the night Paris leaves summer time (02:30 CEST)',
    zone: 'Europe/Paris',
    nominal: '2026-10-25T00:30:00Z',
    dateFrom: '2026-10-24',
    dateTo: '2026-10-25',
    requested: { dateFrom: '2026-10-24T00:00:00+02:00', dateTo: '2026-10-25T00:00:00+02:00' },
    hours: 24,
  },
  {
    name: "the issue's case: 02:30 Paris on 2026-11-10 exports the Paris day 2026-11-09, not the UTC day",
    zone: 'Europe/Paris',
    nominal: '2026-11-10T01:30:00Z',
    dateFrom: '2026-11-09',
    dateTo: '2026-11-10',
    requested: { dateFrom: '2026-11-09T00:00:00+01:00', dateTo: '2026-11-10T00:00:00+01:00' },
    hours: 24,
  },
  {
    name: 'the Paris day that leaves summer time lasts 25 hours',
    zone: 'Europe/Paris',
    nominal: '2026-10-26T01:30:00Z',
    dateFrom: '2026-10-25',
    dateTo: '2026-10-26',
    requested: { dateFrom: '2026-10-25T00:00:00+02:00', dateTo: '2026-10-26T00:00:00+01:00' },
    hours: 25,
  },
  {
    name: 'the Paris day that starts summer time lasts 23 hours',
    zone: 'Europe/Paris',
    nominal: '2026-03-30T00:30:00Z',
    dateFrom: '2026-03-29',
    dateTo: '2026-03-30',
    requested: { dateFrom: '2026-03-29T00:00:00+01:00', dateTo: '2026-03-30T00:00:00+02:00' },
    hours: 23,
  },
  {
    name: 'Santiago skips midnight when summer time starts: that day begins at 01:00',
    zone: 'America/Santiago',
    nominal: '2026-09-07T12:00:00Z',
    dateFrom: '2026-09-06',
    dateTo: '2026-09-07',
    requested: { dateFrom: '2026-09-06T01:00:00-03:00', dateTo: '2026-09-07T00:00:00-03:00' },
    hours: 23,
  },
  {
    name: 'London in winter is at +00:00: bare dates',
    zone: 'Europe/London',
    nominal: '2026-01-10T02:30:00Z',
    dateFrom: '2026-01-09',
    dateTo: '2026-01-10',
  },
  {
    name: 'London in summer is not',
    zone: 'Europe/London',
    nominal: '2026-07-10T01:30:00Z',
    dateFrom: '2026-07-09',
    dateTo: '2026-07-10',
    requested: { dateFrom: '2026-07-09T00:00:00+01:00', dateTo: '2026-07-10T00:00:00+01:00' },
    hours: 24,
  },
  {
    name: 'the night New York starts summer time (03:30 EDT)',
    zone: 'America/New_York',
    nominal: '2026-03-08T07:30:00Z',
    dateFrom: '2026-03-07',
    dateTo: '2026-03-08',
    requested: { dateFrom: '2026-03-07T00:00:00-05:00', dateTo: '2026-03-08T00:00:00-05:00' },
    hours: 24,
  },
  {
    name: 'midnight sharp across a year boundary in Tokyo',
    zone: 'Asia/Tokyo',
    nominal: '2025-12-31T15:00:00Z',
    dateFrom: '2025-12-31',
    dateTo: '2026-01-01',
    requested: { dateFrom: '2025-12-31T00:00:00+09:00', dateTo: '2026-01-01T00:00:00+09:00' },
    hours: 24,
  },
  {
    name: 'after a leap day',
    zone: 'UTC',
    nominal: '2028-03-01T00:10:00Z',
    dateFrom: '2028-02-29',
    dateTo: '2028-03-01',
  },
];

for (const { name, zone, nominal, dateFrom, dateTo, requested, hours } of cases) {
  test(`previous day of the nominal time: ${name}`, () => {
    const day = previousDay(new Date(nominal), zone);
    assert.deepEqual(day, {
      dateFrom,
      dateTo,
      ...(requested === undefined ? {} : { requestRange: requested }),
    });
    if (day.requestRange === undefined || hours === undefined) return;
    const from = parseApiDate(day.requestRange.dateFrom);
    const to = parseApiDate(day.requestRange.dateTo);
    assert.ok(from !== undefined && to !== undefined, 'the dates sent follow the shared date rule');
    assert.equal((to - from) / 3_600_000, hours);
  });
}

test('zoneRange: days given by hand are sent with the zone offsets, several days and DST days included', () => {
  assert.deepEqual(zoneRange('2026-03-28', '2026-03-31', 'Europe/Paris'), {
    dateFrom: '2026-03-28T00:00:00+01:00',
    dateTo: '2026-03-31T00:00:00+02:00',
  });
  assert.equal(zoneRange('2026-11-09', '2026-11-10', 'UTC'), undefined);
});

test('dayBefore: the last day a nightly run at an instant exports, in the zone', () => {
  // 02:30 Paris on 03-29 does not exist; 03:30 CEST is 01:30Z.
  assert.equal(dayBefore(new Date('2026-03-29T01:30:00Z'), 'Europe/Paris'), '2026-03-28');
  // The repeated 02:30 of 10-25, before and after the change: the same day before.
  assert.equal(dayBefore(new Date('2026-10-25T00:30:00Z'), 'Europe/Paris'), '2026-10-24');
  assert.equal(dayBefore(new Date('2026-10-25T01:30:00Z'), 'Europe/Paris'), '2026-10-24');
  assert.equal(dayBefore(new Date('2026-11-09T12:00:00Z'), 'Pacific/Auckland'), '2026-11-09');
  assert.equal(dayBefore(new Date('2026-03-01T00:00:00Z'), 'UTC'), '2026-02-28');
});

test('addDays: calendar days, across months, leap days and DST changes', () => {
  assert.equal(addDays('2028-02-28', 1), '2028-02-29');
  assert.equal(addDays('2026-03-28', 2), '2026-03-30');
  assert.equal(addDays('2026-01-01', -1), '2025-12-31');
});
