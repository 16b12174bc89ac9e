import { WorkflowNotFoundError, type Client, type ScheduleDescription } from '@temporalio/client';
import { z } from 'zod';
import {
  DEFAULT_MAX_CATCH_UP_DAYS,
  nightlyWatermarkWorkflowId,
  type FailedDay,
  type InstantRange,
} from '../contract/nightly';
import { carryOver, dayBefore, dueDays } from '../contract/zone-days';
import { describeVisitorsSchedule } from './schedule';
import { scheduleInput, zoneOf } from './schedule-input';

const rangeSchema = z.object({ dateFrom: z.string(), dateTo: z.string() });

/** The watermark workflow's memo; a part that is missing or odd reads as "nothing exported yet". */
const watermarkMemoSchema = z.object({
  timeZone: z.string().nullable().catch(null),
  watermark: z.string().nullable().catch(null),
  done: z.array(z.string()).catch([]),
  failed: z.array(z.object({ day: z.string(), error: z.string() })).catch([]),
  bridge: rangeSchema.nullable().catch(null),
  closed: z.object({ timeZone: z.string(), watermark: z.string() }).nullable().catch(null),
});

/** A schedule, the zone whose days its runs export, its watermark and the days its next runs will export. */
export interface VisitorsNightlyState {
  schedule: ScheduleDescription;
  timeZone: string;
  /** The last day exported whole (with every day before it); null before the first run. */
  watermark: string | null;
  /** The zone the watermark's days are in: another than `timeZone` until the next run carries it over. */
  watermarkTimeZone: string | null;
  /** Days after the watermark already exported (a day before them is not yet). */
  doneAfterWatermark: string[];
  /** Days whose last export failed, with the error: each run exports them again. */
  failed: FailedDay[];
  /** After a zone change: the hours between the zones not yet exported (the next run exports them). */
  bridge: InstantRange | null;
  /** The zone whose watermark was closed by a zone change, and its last day. */
  closed: { timeZone: string; watermark: string } | null;
  maxCatchUpDays: number;
  /** The next nominal times and the days each will export, if nothing else runs before. */
  nextRuns: { at: string; days: string[]; remaining: number }[];
}

/** Reads the schedule and its watermark (the watermark workflow's memo: no worker needed). */
export async function describeVisitorsNightly(
  client: Client,
  projectId: string,
): Promise<VisitorsNightlyState> {
  const schedule = await describeVisitorsSchedule(client, projectId);
  const timeZone = zoneOf(schedule);
  const input = scheduleInput(schedule);
  const maxCatchUpDays = input.maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS;
  let state = watermarkMemoSchema.parse({});
  try {
    const described = await client.workflow.getHandle(nightlyWatermarkWorkflowId(projectId)).describe();
    state = watermarkMemoSchema.parse(described.memo ?? {});
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  // The next run carries a watermark of another zone over (by instant) before it exports anything.
  let watermark =
    state.watermark !== null && state.timeZone !== null && state.timeZone !== timeZone
      ? carryOver(state.timeZone, state.watermark, timeZone).watermark
      : state.watermark;
  const done = state.timeZone === timeZone ? state.done : [];
  const nextRuns = schedule.info.nextActionTimes.slice(0, 3).map((at) => {
    const due = dueDays(watermark, dayBefore(at, timeZone), maxCatchUpDays, done);
    watermark = due.days.at(-1) ?? watermark;
    return { at: at.toISOString(), days: due.days, remaining: due.remaining };
  });
  return {
    schedule,
    timeZone,
    watermark: state.watermark,
    watermarkTimeZone: state.timeZone,
    doneAfterWatermark: state.done,
    failed: state.failed,
    bridge: state.bridge,
    closed: state.closed,
    maxCatchUpDays,
    nextRuns,
  };
}
