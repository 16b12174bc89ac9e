import type { Client, ScheduleDescription, ScheduleExecutionResult } from '@temporalio/client';
import { coveredOfMemo, DEFAULT_MAX_CATCH_UP_DAYS, exportLabel, type FailedDay } from '../contract/nightly';
import { nightlyRunMemoSchema, type NightlyRunMemo } from '../contract/nightly-schema';
import { dueExports } from '../contract/nightly';
import { dayBefore } from '../contract/zone-days';
import { describeVisitorsSchedule, scheduleInput, zoneOf } from './schedule';

/** A schedule, the zone whose days its runs export, what its latest run found and what the next runs export. */
export interface VisitorsNightlyState {
  schedule: ScheduleDescription;
  timeZone: string;
  /** What the latest run that read the destination found there (its memo); null before any. */
  latestRun: (NightlyRunMemo & { workflowId: string }) | null;
  /** Exports due (days, or `<from>_<to>` ranges) that the latest run left: failed, or past its cap. */
  missing: string[];
  /** The exports that failed in the latest run, with their errors: each run makes them again. */
  failed: FailedDay[];
  maxCatchUpDays: number;
  /** The next nominal times and what each will export, if the destination holds what the latest run left. */
  nextRuns: { at: string; days: string[]; remaining: number }[];
}

/**
 * The memo of the schedule's latest run that has read the destination (the server keeps it: no worker needed),
 * from the schedule's recent actions, latest taken first.
 */
export async function latestNightlyRun(
  client: Client,
  recentActions: readonly ScheduleExecutionResult[],
): Promise<(NightlyRunMemo & { workflowId: string }) | null> {
  const latestFirst = [...recentActions].sort((a, b) => b.takenAt.getTime() - a.takenAt.getTime());
  for (const { action } of latestFirst) {
    const { workflowId, firstExecutionRunId } = action.workflow;
    const { memo } = await client.workflow.getHandle(workflowId, firstExecutionRunId).describe();
    const parsed = nightlyRunMemoSchema.safeParse(memo ?? {});
    if (parsed.success) return { ...parsed.data, workflowId };
  }
  return null;
}

/**
 * Reads the schedule and its latest run's memo, and computes what the next runs export as the runs do
 * (dueExports over the instants held whole), a zone change included: a run never exports a day that has not
 * ended, so the next run exports nothing new when its zone has no ended day after the instants held.
 */
export async function describeVisitorsNightly(
  client: Client,
  projectId: string,
): Promise<VisitorsNightlyState> {
  const schedule = await describeVisitorsSchedule(client, projectId);
  const timeZone = zoneOf(schedule);
  const maxCatchUpDays = scheduleInput(schedule).maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS;
  const latestRun = await latestNightlyRun(client, schedule.info.recentActions);
  const covered = latestRun === null ? [] : coveredOfMemo(latestRun);
  const missing =
    latestRun === null
      ? []
      : dueExports(covered, latestRun.timeZone, latestRun.through, latestRun.olderExports).map(exportLabel);
  const nextRuns = schedule.info.nextActionTimes.slice(0, 3).map((at) => {
    const due = dueExports(covered, timeZone, dayBefore(at, timeZone), latestRun?.olderExports);
    const now = due.slice(0, maxCatchUpDays);
    covered.push(...now);
    return { at: at.toISOString(), days: now.map(exportLabel), remaining: due.length - now.length };
  });
  return {
    schedule,
    timeZone,
    latestRun,
    missing,
    failed: latestRun?.failed ?? [],
    maxCatchUpDays,
    nextRuns,
  };
}
