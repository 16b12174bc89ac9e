// The nightly export (workflow `visitorsNightly`): what a run owes and what it returns. Free of zod and I/O, so
// that workflow code, the activities and the client share it.
import type { VisitorTotals } from './visitors-export';

/** How many exports one nightly run makes at most; the rest is left to the next runs. */
export const DEFAULT_MAX_CATCH_UP_DAYS = 31;
/** Upper bound of `maxCatchUpDays`: an export costs the nightly run about 12 history events. */
export const MAX_CATCH_UP_DAYS = 100;

/** Instants [from, to) (ms) held by whole exports at the destination. */
export interface Covered {
  from: number;
  to: number;
}

/**
 * One export a nightly run owes: a day of its zone (`timeZone` set, dates `YYYY-MM-DD`), or the hours between
 * days of two zones after a zone change (date-times with offsets, no `timeZone`). `from`/`to` are its instants.
 */
export interface NightlyExport extends Covered {
  dateFrom: string;
  dateTo: string;
  timeZone?: string;
}

/** A day's `YYYY-MM-DD`, or a range's `<dateFrom>_<dateTo>`: how results and `schedule describe` name an export. */
export function exportLabel(item: {
  dateFrom: string;
  dateTo: string;
  timeZone?: string | undefined;
}): string {
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

/** A run's export and how it ended. */
export interface NightlyDay {
  /** exportLabel. */
  day: string;
  status: 'exported' | 'found-exported' | 'failed';
  workflowId: string;
  error?: string;
}

/** An export that failed in the latest run (`day`: exportLabel): it stays due, and every run exports it again. */
export interface FailedDay {
  day: string;
  error: string;
}

/** What `visitorsNightly` returns. */
export interface VisitorsNightlyResult {
  projectId: string;
  /** The zone whose days were exported, and where it came from. */
  timeZone: string;
  timeZoneFrom: 'input' | 'schedule' | 'default';
  /** The last day due: the day before the run's nominal time in `timeZone`. */
  through: string;
  /** Exports done by this run or found done (by another run, a backfill), oldest first (exportLabel). */
  exported: string[];
  /** Exports that failed: the later ones were still made, and the next run makes these again. */
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
