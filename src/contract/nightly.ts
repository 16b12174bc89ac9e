// The nightly exports' watermark: names and messages shared by the workflow, the activities and the client.
// Free of zod, so that workflow code may import it.
import { defineUpdate } from '@temporalio/workflow';

/** How many days one scheduled run exports at most; the rest is left to the next runs. */
export const DEFAULT_MAX_CATCH_UP_DAYS = 31;
/** Upper bound of `maxCatchUpDays`: a day costs the scheduled run about 12 history events. */
export const MAX_CATCH_UP_DAYS = 100;

/** The watermark workflow's type name. */
export const NIGHTLY_WATERMARK_WORKFLOW_TYPE = 'visitorsExportWatermark';

/** One watermark per project and zone: `visitors-export-watermark/<projectId>/<timeZone>`. */
export function nightlyWatermarkWorkflowId(projectId: string, timeZone: string): string {
  return `visitors-export-watermark/${projectId}/${timeZone}`;
}

/** What the watermark workflow holds (and carries through continue-as-new): plain JSON. */
export interface NightlyWatermarkState {
  projectId: string;
  timeZone: string;
  /** The last day (`YYYY-MM-DD` of the zone) such that it and every day before it are exported whole. */
  watermark: string | null;
  /** Days after the watermark already exported whole (a gap before them is still due), oldest first. */
  done: string[];
  /** Whether any day was reported exported: until then, a run with an earlier first day may lower the watermark. */
  advanced: boolean;
}

/** The watermark and the days after it already done, as the workflow's memo and the updates return them. */
export type NightlyWatermark = Pick<NightlyWatermarkState, 'watermark' | 'done'>;

/**
 * Returns the watermark, first setting it to `initial` when it has none (a schedule's first run: the day before
 * the first day it exports), or lowering it to `initial` while no day has been reported yet (concurrent first runs:
 * the earliest wins).
 */
export const readWatermarkUpdate = defineUpdate<NightlyWatermark, [{ initial: string }]>('readWatermark');

/** Records a day exported whole; the watermark moves over it once every day before it is whole too. */
export const advanceWatermarkUpdate = defineUpdate<NightlyWatermark, [{ day: string }]>('advanceWatermark');

/** A scheduled run's catch-up, in its result (`nightly`). */
export interface NightlyReport {
  /** The zone whose days were exported, and where it came from. */
  timeZone: string;
  timeZoneFrom: 'input' | 'schedule' | 'default';
  /** The last day due: the day before the run's nominal time in `timeZone`. */
  through: string;
  /** Days exported by this run (or found already exported by another), oldest first. */
  exported: string[];
  /** The watermark after the run. */
  watermark: string | null;
  /** Days due but left to the next runs (past `maxCatchUpDays`, or after a day another run is exporting). */
  remaining: number;
}
