// The nightly export (workflow `visitorsNightly`) and its watermark: names, messages and shapes shared by the
// workflows, the activities and the client. Free of zod, so that workflow code may import it.
import { defineUpdate } from '@temporalio/workflow';
import type { VisitorTotals } from './visitors-export';

/** How many days one nightly run exports at most; the rest is left to the next runs. */
export const DEFAULT_MAX_CATCH_UP_DAYS = 31;
/** Upper bound of `maxCatchUpDays`: a day costs the nightly run about 12 history events. */
export const MAX_CATCH_UP_DAYS = 100;

/** One watermark per project: `visitors-nightly-watermark/<projectId>`. It holds the zone of its days. */
export function nightlyWatermarkWorkflowId(projectId: string): string {
  return `visitors-nightly-watermark/${projectId}`;
}

/** The watermark's static summary in the UI, and the first line of its current details (set again by every run). */
export function nightlyWatermarkSummary(projectId: string): string {
  return `Nightly export watermark of ${projectId}`;
}

/** A range of instants (ISO 8601, `dateTo` exclusive). */
export interface InstantRange {
  dateFrom: string;
  dateTo: string;
}

/** A day that failed, kept until a run exports it whole. */
export interface FailedDay {
  day: string;
  error: string;
}

/** What the watermark workflow holds, carries through continue-as-new and mirrors in its memo: plain JSON. */
export interface NightlyWatermarkState {
  projectId: string;
  /** The zone whose days `watermark`, `done` and `failed` are; null before the first run. */
  timeZone: string | null;
  /** The last day of `timeZone` such that it and every day before it are exported whole. */
  watermark: string | null;
  /** Days after the watermark already exported whole (a day before them is still due), oldest first. */
  done: string[];
  /** Days after the watermark whose last export failed, with the error; retried by every run. */
  failed: FailedDay[];
  /**
   * After a zone change: the instants between the old zone's coverage and the new zone's first whole day, still
   * to export as one range. Null once exported (or when there is none).
   */
  bridge: InstantRange | null;
  /** The zone (and its last day) whose coverage was carried over to `timeZone`: that watermark is closed. */
  closed: { timeZone: string; watermark: string } | null;
  /**
   * The day before the first day the nightly export took on in this zone: days up to it were never due. A run
   * whose first due day is earlier (a backfill of older nights) moves it back, and those days become due.
   */
  origin: string | null;
}

/** The watermark's state as the updates return it. */
export type NightlyWatermark = Omit<NightlyWatermarkState, 'projectId'>;

/**
 * Returns the watermark of `timeZone`. A watermark without days takes `initial` (a schedule's first run: the day
 * before the first day it exports); an `initial` before the origin (a backfill of older nights, runs that start in
 * any order) makes the days after it due, the days already whole staying done. A watermark of another zone is
 * closed and its coverage carried over by instant.
 */
export const readWatermarkUpdate = defineUpdate<NightlyWatermark, [{ timeZone: string; initial: string }]>(
  'readWatermark',
);

/**
 * Reports a day's export (or the bridge's): done whole, or failed with its error. The watermark moves over a day
 * once every day before it is whole too. A report for another zone than the watermark's changes nothing.
 */
export const reportDayUpdate = defineUpdate<
  NightlyWatermark,
  [{ timeZone: string; day?: string; bridge?: InstantRange; error?: string }]
>('reportDay');

/** A day's outcome in a nightly run. */
export interface NightlyDay {
  day: string;
  status: 'exported' | 'found-exported' | 'failed';
  workflowId: string;
  error?: string;
}

/** What `visitorsNightly` returns. */
export interface VisitorsNightlyResult {
  projectId: string;
  /** The zone whose days were exported, and where it came from. */
  timeZone: string;
  timeZoneFrom: 'input' | 'schedule' | 'default';
  /** The last day due: the day before the run's nominal time in `timeZone`. */
  through: string;
  /** Days exported whole by this run, or found exported whole (by another run, a backfill), oldest first. */
  exported: string[];
  /** Days whose export failed: later days were still exported, and the next run retries these. */
  failed: FailedDay[];
  /** After a zone change: the instants exported as one range between the old zone's days and the new zone's. */
  bridge?: InstantRange & { workflowId: string; error?: string };
  days: NightlyDay[];
  /** The watermark after the run. */
  watermark: string | null;
  /** Days due but left to the next runs (past `maxCatchUpDays`). */
  remaining: number;
  totals: VisitorTotals;
  rows: number;
  pages: number;
  files: string[];
  warnings: string[];
}

/** The failure a nightly run ends with when its watermark does not answer within its bound (non-retryable). */
export const NIGHTLY_WATERMARK_UNAVAILABLE = 'NightlyWatermarkUnavailable';
