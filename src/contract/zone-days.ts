/** A date range: `dateTo` exclusive, as in the service. */
export interface DateRange {
  dateFrom: string;
  dateTo: string;
}

/**
 * Days of a zone: their local dates, and the range to send when the zone is not UTC at both ends (the service
 * reads a bare date as midnight UTC, so such days are sent as date-times with the zone's offsets).
 */
export interface ScheduledDay extends DateRange {
  /** The same day as date-times with the zone's offsets (23 or 25 hours long on DST days). */
  requestRange?: DateRange;
}

const DAY_MS = 86_400_000;

/**
 * The calendar days [dateFrom, dateTo) of `timeZone` (both `YYYY-MM-DD`), with the range to send when either end
 * is not at offset +00:00: the first instant of each day as a date-time with the zone's offset.
 */
export function zoneDays(dateFrom: string, dateTo: string, timeZone: string): ScheduledDay {
  const from = startOfDay(Date.parse(`${dateFrom}T00:00:00Z`), timeZone);
  const to = startOfDay(Date.parse(`${dateTo}T00:00:00Z`), timeZone);
  if (from.offsetMs === 0 && to.offsetMs === 0) return { dateFrom, dateTo };
  return { dateFrom, dateTo, requestRange: { dateFrom: from.text, dateTo: to.text } };
}

/** The calendar day (`YYYY-MM-DD`) of an instant in `timeZone`. */
export function localDayOf(instant: Date, timeZone: string): string {
  return isoDate(localDayStart(instant.getTime(), timeZone));
}

/** The calendar day before the one of `instant` in `timeZone`: the last day a nightly run at `instant` exports. */
export function dayBefore(instant: Date, timeZone: string): string {
  return addDays(localDayOf(instant, timeZone), -1);
}

/** `YYYY-MM-DD` plus `days` calendar days (calendar days have no zone). */
export function addDays(day: string, days: number): string {
  return isoDate(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS);
}

/** A nightly run's work: the days after `watermark` up to `through`, the first `max` of them now. */
export interface DueDays {
  /** Exported by this run, oldest first. */
  days: string[];
  /** Due but past the cap: left to the next runs. */
  remaining: number;
}

/**
 * The days a nightly run exports: every day after `watermark` (the last day exported whole) up to and including
 * `through`, oldest first, except those already `done`, at most `max`. Without a watermark (a schedule's first run)
 * only `through` is due.
 */
export function dueDays(
  watermark: string | null,
  through: string,
  max: number,
  done: readonly string[] = [],
): DueDays {
  const first = watermark === null ? through : addDays(watermark, 1);
  const count = Math.max(0, Math.round((Date.parse(through) - Date.parse(first)) / DAY_MS) + 1);
  const due = Array.from({ length: count }, (_, i) => addDays(first, i)).filter((day) => !done.includes(day));
  const days = due.slice(0, Math.max(0, max));
  return { days, remaining: due.length - days.length };
}

/** The first instant of a day (`YYYY-MM-DD`) of `timeZone`: ms since the epoch, and as a date-time with its offset. */
export function dayStart(day: string, timeZone: string): { instant: number; text: string } {
  const start = startOfDay(Date.parse(`${day}T00:00:00Z`), timeZone);
  return { instant: Date.parse(start.text), text: start.text };
}

/** Where a zone change leaves the nightly export: the new zone's watermark, and the instants between the zones. */
export interface ZoneCarryOver {
  /** The day before the new zone's first day that starts at or after the old zone's coverage ends. */
  watermark: string;
  /** The instants from the end of the old zone's coverage to that first day's start; null when they meet. */
  bridge: DateRange | null;
}

/**
 * Carries coverage over from one zone to another by instant: the old zone covered every instant before the end
 * of its watermark day. The new zone's first day is the first one that starts at or after that end, and the hours
 * in between are one range of instants. Nothing is covered twice, and no instant is left out.
 */
export function carryOver(fromZone: string, watermark: string, toZone: string): ZoneCarryOver {
  const end = dayStart(addDays(watermark, 1), fromZone);
  let first = localDayOf(new Date(end.instant), toZone);
  let firstStart = dayStart(first, toZone);
  if (firstStart.instant < end.instant) {
    first = addDays(first, 1);
    firstStart = dayStart(first, toZone);
  }
  return {
    watermark: addDays(first, -1),
    bridge: firstStart.instant === end.instant ? null : { dateFrom: end.text, dateTo: firstStart.text },
  };
}

/** A gap of more days than this between exported days is taken as the time before the nightly export began. */
export const REBUILD_GAP_DAYS = 31;

/**
 * A lost watermark rebuilt from the days found exported whole: the last day of the first unbroken run of days in
 * the latest stretch (gaps of at most REBUILD_GAP_DAYS days), with the later days found as `done`. A gap inside
 * that stretch is due again; nothing exported is taken for a day that was not.
 */
export function rebuiltWatermark(days: readonly string[]): {
  watermark: string | null;
  done: string[];
  /** The day before the stretch: the days up to it are taken as never due. */
  origin: string | null;
} {
  const sorted = [...new Set(days)].sort();
  let start = sorted.length - 1;
  while (start > 0 && daysBetween(sorted[start - 1] ?? '', sorted[start] ?? '') <= REBUILD_GAP_DAYS + 1) {
    start -= 1;
  }
  const stretch = sorted.slice(Math.max(0, start));
  let watermark = stretch[0] ?? null;
  while (watermark !== null && stretch.includes(addDays(watermark, 1))) watermark = addDays(watermark, 1);
  const last = watermark;
  return {
    watermark,
    done: last === null ? [] : stretch.filter((day) => day > last),
    origin: last === null ? null : addDays(stretch[0] ?? last, -1),
  };
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
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
