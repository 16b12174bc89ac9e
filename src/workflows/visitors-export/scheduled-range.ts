/** A date range: `dateTo` exclusive, as in the service. */
export interface DateRange {
  dateFrom: string;
  dateTo: string;
}

/** A scheduled run's day: its local dates, and the range to send when the zone is not UTC at both ends. */
export interface ScheduledDay extends DateRange {
  /** The same day as date-times with the zone's offsets (23 or 25 hours long on DST days). */
  requestRange?: DateRange;
}

const DAY_MS = 86_400_000;

/**
 * The day a scheduled run exports: the calendar day before the schedule's nominal time, in the schedule's time
 * zone, as [YYYY-MM-DD, YYYY-MM-DD). The service reads a bare date as midnight UTC, so a day whose ends are not
 * at offset +00:00 is also given as date-times with the zone's offsets (`requestRange`), which is what is sent.
 */
export function previousDay(nominalTime: Date, timeZone: string): ScheduledDay {
  const today = wallClock(nominalTime.getTime(), timeZone);
  const localDay = Date.UTC(today.year, today.month - 1, today.day);
  const dateFrom = isoDate(localDay - DAY_MS);
  const dateTo = isoDate(localDay);
  const from = startOfDay(localDay - DAY_MS, timeZone);
  const to = startOfDay(localDay, timeZone);
  if (from.offsetMs === 0 && to.offsetMs === 0) return { dateFrom, dateTo };
  return { dateFrom, dateTo, requestRange: { dateFrom: from.text, dateTo: to.text } };
}

/**
 * The first instant of a local calendar day (given as its UTC midnight) in `timeZone`, as an ISO 8601 date-time
 * with that instant's offset. Usually 00:00; where a DST gap swallows midnight, the instant the clocks jump.
 */
function startOfDay(dayAsUtc: number, timeZone: string): { text: string; offsetMs: number } {
  // Midnight under the offsets in force around it; the earliest that really is on that day wins.
  const offsets = [offsetAt(dayAsUtc - DAY_MS / 2, timeZone), offsetAt(dayAsUtc + DAY_MS / 2, timeZone)];
  const candidates = offsets
    .map((offset) => dayAsUtc - offset)
    .filter((instant) => localDayStart(instant, timeZone) === dayAsUtc)
    .sort((a, b) => a - b);
  const instant = candidates[0] ?? Math.max(...offsets.map((offset) => dayAsUtc - offset));
  const offsetMs = offsetAt(instant, timeZone);
  return { text: `${isoDate(dayAsUtc)}T${isoTime(instant + offsetMs)}${formatOffset(offsetMs)}`, offsetMs };
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(instant: number, timeZone: string): WallClock {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(instant);
  const get = (type: Intl.DateTimeFormatPartTypes): number =>
    Number(parts.find((p) => p.type === type)?.value);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

/** The zone's offset from UTC at an instant, in ms (whole seconds). */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  const wallAsUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return wallAsUtc - Math.floor(instant / 1000) * 1000;
}

/** The local calendar day of an instant, as that day's UTC midnight. */
function localDayStart(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day);
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${offsetMs < 0 ? '-' : '+'}${hh}:${mm}`;
}
