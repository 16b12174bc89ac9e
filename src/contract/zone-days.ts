const DAY_MS = 86_400_000;

/** A calendar day `YYYY-MM-DD` (not checked to exist: api-dates.ts checks dates). */
export function isDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value);
}

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

/** The first instant of a day (`YYYY-MM-DD`) of `timeZone`: ms since the epoch, and as a date-time with its offset. */
export function dayStart(day: string, timeZone: string): { instant: number; text: string } {
  const text = instantText(startOfDay(Date.parse(`${day}T00:00:00Z`), timeZone), timeZone);
  return { instant: Date.parse(text), text };
}

/** An instant as an ISO 8601 date-time with the offset `timeZone` has then (`2026-11-20T08:00:00-08:00`). */
export function instantText(instant: number, timeZone: string): string {
  const offsetMs = offsetAt(instant, timeZone);
  return `${new Date(instant + offsetMs).toISOString().slice(0, 19)}${formatOffset(offsetMs)}`;
}

/**
 * The first instant of a local calendar day (given as its UTC midnight) in `timeZone`. Usually 00:00; where a DST
 * gap swallows midnight, the instant the clocks jump.
 */
function startOfDay(dayAsUtc: number, timeZone: string): number {
  // Midnight under the offsets in force around it; the earliest that really is on that day wins.
  const offsets = [offsetAt(dayAsUtc - DAY_MS / 2, timeZone), offsetAt(dayAsUtc + DAY_MS / 2, timeZone)];
  const candidates = offsets
    .map((offset) => dayAsUtc - offset)
    .filter((instant) => localDayStart(instant, timeZone) === dayAsUtc)
    .sort((a, b) => a - b);
  return candidates[0] ?? Math.max(...offsets.map((offset) => dayAsUtc - offset));
}

/** The wall-clock time of an instant in `timeZone`, whole seconds, read as if it were UTC (ms). */
function wallAsUtc(instant: number, timeZone: string): number {
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
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/** The zone's offset from UTC at an instant, in ms (whole seconds). */
function offsetAt(instant: number, timeZone: string): number {
  return wallAsUtc(instant, timeZone) - Math.floor(instant / 1000) * 1000;
}

/** The local calendar day of an instant, as that day's UTC midnight. */
function localDayStart(instant: number, timeZone: string): number {
  return Math.floor(wallAsUtc(instant, timeZone) / DAY_MS) * DAY_MS;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${offsetMs < 0 ? '-' : '+'}${hh}:${mm}`;
}
