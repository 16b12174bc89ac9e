import { WorkflowNotFoundError, type Client, type ScheduleDescription } from '@temporalio/client';
import { z } from 'zod';
import {
  DEFAULT_MAX_CATCH_UP_DAYS,
  nightlyWatermarkWorkflowId,
  type NightlyWatermark,
} from '../contract/nightly';
import { dayBefore, dueDays } from '../contract/zone-days';
import { describeVisitorsSchedule } from './schedule';
import { scheduleInput, zoneOf } from './schedule-input';

/** The watermark workflow's memo; a part that is missing or odd reads as "nothing exported yet". */
const watermarkMemoSchema = z.object({
  watermark: z.string().nullable().catch(null),
  done: z.array(z.string()).catch([]),
});

/** A schedule, the zone whose days its runs export, its watermark and the days its next runs will export. */
export interface VisitorsNightlyState {
  schedule: ScheduleDescription;
  timeZone: string;
  /** The last day exported whole (with every day before it); null before the first run. */
  watermark: string | null;
  /** Days after the watermark already exported (a day before them is not yet). */
  doneAfterWatermark: string[];
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
  let state: NightlyWatermark = { watermark: null, done: [] };
  try {
    const described = await client.workflow
      .getHandle(nightlyWatermarkWorkflowId(projectId, timeZone))
      .describe();
    state = watermarkMemoSchema.parse(described.memo ?? {});
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  let { watermark } = state;
  const nextRuns = schedule.info.nextActionTimes.slice(0, 3).map((at) => {
    const due = dueDays(watermark, dayBefore(at, timeZone), maxCatchUpDays, state.done);
    watermark = due.days.at(-1) ?? watermark;
    return { at: at.toISOString(), days: due.days, remaining: due.remaining };
  });
  return {
    schedule,
    timeZone,
    watermark: state.watermark,
    doneAfterWatermark: state.done,
    maxCatchUpDays,
    nextRuns,
  };
}
