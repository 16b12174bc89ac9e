// The nightly export (workflow `visitorsNightly`): what a run owes and what it returns. Free of zod and I/O, so
// that workflow code, the activities and the client share it.
import type { VisitorsExportInput, VisitorTotals } from './visitors-export';
import { addDays, dayStart, instantText } from './zone-days';

/** How many exports one nightly run makes at most; the rest is left to the next runs. */
export const DEFAULT_MAX_CATCH_UP_DAYS = 31;
/** Upper bound of `maxCatchUpDays`: an export costs the nightly run about 12 history events. */
export const MAX_CATCH_UP_DAYS = 100;

/** Instants [from, to) (ms) held by whole exports at the destination. */
export interface Covered {
  from: number;
  to: number;
}

/** One export a nightly run owes: a day of its zone, or the hours between days of two zones after a zone change. */
export interface NightlyExport extends Covered {
  dateFrom: string;
  dateTo: string;
  timeZone?: string;
}

/** A day's `YYYY-MM-DD`, or a range's `<dateFrom>_<dateTo>`. */
export function exportLabel(item: Pick<VisitorsExportInput, 'dateFrom' | 'dateTo' | 'timeZone'>): string {
  return item.timeZone === undefined ? `${item.dateFrom}_${item.dateTo}` : item.dateFrom;
}

/** Overlapping or touching spans as one, oldest first. */
export function mergeCovered(covered: readonly Covered[]): Covered[] {
  const merged: Covered[] = [];
  for (const c of [...covered].sort((a, b) => a.from - b.from)) {
    const last = merged.at(-1);
    if (last !== undefined && c.from <= last.to) last.to = Math.max(last.to, c.to);
    else merged.push({ from: c.from, to: c.to });
  }
  return merged;
}

export function coveredOfMemo(memo: { covered: [string, string][] }): Covered[] {
  return memo.covered.map(([from, to]) => ({ from: Date.parse(from), to: Date.parse(to) }));
}

export function memoCovered(covered: readonly Covered[]): [string, string][] {
  return mergeCovered(covered).map((c) => [new Date(c.from).toISOString(), new Date(c.to).toISOString()]);
}

/** A run's export (`day`: exportLabel) and how it ended. */
export interface NightlyDay {
  day: string;
  status: 'exported' | 'found-exported' | 'failed';
  workflowId: string;
  error?: string;
}

/** An export that failed in the latest run: it stays due. */
export interface FailedDay {
  day: string;
  error: string;
}

export interface VisitorsNightlyResult {
  projectId: string;
  timeZone: string;
  timeZoneFrom: 'input' | 'schedule' | 'default';
  /** The last day due: the day before the run's nominal time in `timeZone`. */
  through: string;
  /** Exports done by this run or found done (by another run, a backfill), oldest first. */
  exported: string[];
  failed: FailedDay[];
  days: NightlyDay[];
  /** The end of the first span of instants held whole (ISO): everything from the run's start up to it is done. */
  wholeThrough: string | null;
  /** Exports due but left to the next runs (past `maxCatchUpDays`). */
  remaining: number;
  totals: VisitorTotals;
  rows: number;
  pages: number;
  files: string[];
  warnings: string[];
}

/** How many days back a run looks for days without a whole export; older ones are left to `schedule backfill`. */
export const NIGHTLY_LOOK_BACK_DAYS = 100;

/**
 * The exports due up to the end of `through` (a day of `timeZone`), oldest first (docs/nightly.md): the days of the
 * look-back no whole export holds, and the hours no such day fits (after a zone change) as one range each, so no
 * instant is exported twice. Every export due has ended by the end of `through`.
 */
export function dueExports(
  covered: readonly Covered[],
  timeZone: string,
  through: string,
  olderExports = false,
  lookBack = NIGHTLY_LOOK_BACK_DAYS,
): NightlyExport[] {
  const first = addDays(through, 1 - lookBack);
  const end = dayStart(addDays(through, 1), timeZone).instant;
  const held = covered.filter((c) => c.to > dayStart(first, timeZone).instant && c.from < end);
  const windowStart = dayStart(first, timeZone).instant;
  const start = olderExports
    ? windowStart
    : held.length === 0
      ? dayStart(through, timeZone).instant
      : Math.max(windowStart, Math.min(...held.map((c) => c.from)));
  const due: NightlyExport[] = [];
  for (let day = first; day <= through; day = addDays(day, 1)) {
    const dateTo = addDays(day, 1);
    const [from, to] = [dayStart(day, timeZone).instant, dayStart(dateTo, timeZone).instant];
    if (from >= start && !held.some((c) => c.from < to && from < c.to)) {
      due.push({ dateFrom: day, dateTo, timeZone, from, to });
    }
  }
  let at = start;
  const ranges: NightlyExport[] = [];
  for (const c of [...held, ...due].sort((a, b) => a.from - b.from)) {
    if (c.from > at) ranges.push(rangeOf(at, c.from, timeZone));
    at = Math.max(at, c.to);
  }
  if (at < end) ranges.push(rangeOf(at, end, timeZone));
  return [...due, ...ranges].sort((a, b) => a.from - b.from);
}

function rangeOf(from: number, to: number, timeZone: string): NightlyExport {
  return { dateFrom: instantText(from, timeZone), dateTo: instantText(to, timeZone), from, to };
}
