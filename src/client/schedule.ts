import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleHandle,
  type ScheduleOptions,
} from '@temporalio/client';
import { z } from 'zod';
import { DocsProjectIdKey, visitorsScheduleId, WorkflowType } from '../contract/names';
import { durationSchema, InputValidationError, parseOrThrow, projectIdSchema } from '../contract/validation';
import { timeZoneSchema, UNENDED_RANGE_RULE, rangeEnd } from '../contract/visitors-export';
import { coveredOfMemo, DEFAULT_MAX_CATCH_UP_DAYS, dueExports, exportLabel } from '../contract/nightly';
import {
  nightlyRunMemoSchema,
  visitorsNightlyInputSchema,
  type NightlyRunMemo,
  type VisitorsNightlyInput,
} from '../contract/nightly-schema';
import { addDays, dayBefore, isDay } from '../contract/zone-days';
import { startVisitorsExport } from './visitors-export';
import { taskQueueFromEnv } from './connect';

const nightlyFields = visitorsNightlyInputSchema.shape;

/**
 * What a schedule's runs are started with, as far as the schedule's settings go. The schedule may have been made
 * by hand (the `temporal` CLI, the UI): a setting that breaks its rule reads as absent, and the workflow refuses it.
 */
const scheduledInputSchema = z.object({
  format: nightlyFields.format.catch(undefined),
  pageSize: nightlyFields.pageSize.catch(undefined),
  concurrency: nightlyFields.concurrency.catch(undefined),
  timeZone: nightlyFields.timeZone.catch(undefined),
  maxCatchUpDays: nightlyFields.maxCatchUpDays.catch(undefined),
});

/** The fields that are set: an optional field must be absent rather than undefined (exactOptionalPropertyTypes). */
export function defined<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export const visitorsScheduleOptionsSchema = z
  .object({
    projectId: projectIdSchema,
    /** Time of day of the nightly run, HH:MM in `timeZone`. */
    at: z
      .string({ error: 'must be a string' })
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (24-hour)'),
    /** IANA zone of `at`, and whose days the runs export (each run: every day due up to the day before it). */
    timeZone: timeZoneSchema,
    /** How late a run missed while Temporal was unavailable may still start (default 1 day). */
    catchupWindow: durationSchema.optional(),
    format: nightlyFields.format,
    pageSize: nightlyFields.pageSize,
    concurrency: nightlyFields.concurrency,
    /** How many days one run exports at most when it catches up (default 31); the rest waits for the next runs. */
    maxCatchUpDays: nightlyFields.maxCatchUpDays,
    taskQueue: z.string().min(1, 'must not be empty').optional(),
  })
  .strict();

const visitorsScheduleChangesSchema = visitorsScheduleOptionsSchema.partial({ at: true, timeZone: true });

export type VisitorsScheduleOptions = z.input<typeof visitorsScheduleOptionsSchema>;
/** An update names the project and the settings that change; the others keep their current values. */
export type VisitorsScheduleChanges = z.input<typeof visitorsScheduleChangesSchema>;

function scheduleOptions(options: VisitorsScheduleOptions): ScheduleOptions {
  const [hour, minute] = options.at.split(':').map(Number) as [number, number];
  // The input names the zone too, so that a run's days never depend on reading the schedule back.
  const { projectId, timeZone, format, pageSize, concurrency, maxCatchUpDays } = options;
  const input: VisitorsNightlyInput = {
    projectId,
    timeZone,
    ...defined({ format, pageSize, concurrency, maxCatchUpDays }),
  };
  return {
    scheduleId: visitorsScheduleId(options.projectId),
    spec: { calendars: [{ hour, minute, comment: `nightly at ${options.at}` }], timezone: options.timeZone },
    action: {
      type: 'startWorkflow',
      workflowType: WorkflowType.visitorsNightly,
      taskQueue: options.taskQueue ?? taskQueueFromEnv(),
      // The server appends each run's nominal time to this id.
      workflowId: `${visitorsScheduleId(options.projectId)}/run`,
      args: [input],
      typedSearchAttributes: [{ key: DocsProjectIdKey, value: options.projectId }],
      staticSummary: `Nightly visitors export of ${options.projectId}`,
    },
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: options.catchupWindow ?? '1 day',
    },
  };
}

/**
 * Creates the schedule `visitors-export-nightly/<projectId>`: `visitorsNightly` at `at` in `timeZone` (overlap
 * SKIP). Options are checked before Temporal is contacted; an existing schedule raises ScheduleAlreadyRunning.
 */
export async function createVisitorsSchedule(
  client: Client,
  options: VisitorsScheduleOptions,
): Promise<ScheduleHandle> {
  const valid = parseOrThrow(visitorsScheduleOptionsSchema, options, 'schedule options');
  return client.schedule.create(scheduleOptions(valid));
}

export function visitorsScheduleHandle(client: Client, projectId: string): ScheduleHandle {
  return client.schedule.getHandle(visitorsScheduleId(parseOrThrow(projectIdSchema, projectId, 'projectId')));
}

export async function describeVisitorsSchedule(
  client: Client,
  projectId: string,
): Promise<ScheduleDescription> {
  return visitorsScheduleHandle(client, projectId).describe();
}

/** Changes time of day, zone, catch-up window or export options; the schedule keeps its id, state and runs. */
export async function updateVisitorsSchedule(
  client: Client,
  changes: VisitorsScheduleChanges,
): Promise<void> {
  const valid = parseOrThrow(visitorsScheduleChangesSchema, changes, 'schedule options');
  await visitorsScheduleHandle(client, valid.projectId).update((previous) => {
    const current = currentOptions(previous, valid.projectId).options;
    const next = scheduleOptions(
      parseOrThrow(visitorsScheduleOptionsSchema, { ...current, ...defined(valid) }, 'schedule options'),
    );
    return {
      ...previous,
      spec: next.spec,
      action: next.action,
      policies: { ...previous.policies, ...next.policies },
    };
  });
}

/**
 * The settings a schedule has now, read back from its description, and `zone`, whose days its runs export: the
 * input's, else the schedule's own (as the workflow reads).
 */
function currentOptions(description: ScheduleDescription, projectId: string) {
  const calendar = description.spec.calendars?.[0];
  const hour = calendar?.hour?.[0]?.start;
  const minute = calendar?.minute?.[0]?.start;
  const action = description.action.type === 'startWorkflow' ? description.action : undefined;
  const parsed = scheduledInputSchema.safeParse(action?.args?.[0] ?? {});
  const { timeZone, ...input } = parsed.success ? parsed.data : {};
  const at =
    hour === undefined || minute === undefined
      ? undefined
      : `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
  const options: Partial<VisitorsScheduleOptions> = {
    projectId,
    timeZone: description.spec.timezone ?? timeZone ?? 'UTC',
    catchupWindow: description.policies.catchupWindow,
    ...defined({ at, ...input, taskQueue: action?.taskQueue }),
  };
  return { options, zone: timeZone ?? (description.spec.timezone || 'UTC') };
}

export async function pauseVisitorsSchedule(client: Client, projectId: string, note?: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).pause(note);
}

export async function unpauseVisitorsSchedule(
  client: Client,
  projectId: string,
  note?: string,
): Promise<void> {
  await visitorsScheduleHandle(client, projectId).unpause(note);
}

/** Runs the schedule's action now: exports every day due up to the day before today in the schedule's zone. */
export async function triggerVisitorsSchedule(client: Client, projectId: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
}

const MAX_BACKFILL_DAYS = 366;

const backfillDay = z
  .string()
  .refine(isDay, 'must be a day YYYY-MM-DD')
  .refine((day) => !isDay(day) || addDays(day, 0) === day, 'must be a real day');

const backfillDaysSchema = z
  .object({ fromDay: backfillDay, toDay: backfillDay })
  .strict()
  .superRefine(({ fromDay, toDay }, ctx) => {
    // Runs after the field checks too (zod reports every issue): days that are not YYYY-MM-DD were reported.
    if (![fromDay, toDay].every(isDay)) return;
    const rule =
      toDay < fromDay
        ? 'must not be before the first day'
        : toDay > addDays(fromDay, MAX_BACKFILL_DAYS - 1)
          ? `at most ${MAX_BACKFILL_DAYS} days from the first day`
          : undefined;
    if (rule !== undefined) ctx.addIssue({ code: 'custom', path: ['toDay'], message: rule });
  });

export type BackfillDays = z.input<typeof backfillDaysSchema>;

/**
 * Exports the days fromDay..toDay (both included, days of the schedule's zone) with the schedule's settings, one
 * export per day under the id a nightly run gives that day, so the nightly runs find them done. A day that has not
 * ended in the zone is refused before anything starts. Returns at once.
 */
export async function backfillVisitorsSchedule(
  client: Client,
  projectId: string,
  days: BackfillDays,
): Promise<{ timeZone: string; days: { day: string; workflowId: string }[] }> {
  const { fromDay, toDay } = parseOrThrow(backfillDaysSchema, days, 'backfill days');
  const description = await describeVisitorsSchedule(client, projectId);
  const { options, zone: timeZone } = currentOptions(description, projectId);
  const { format, pageSize, concurrency, taskQueue } = options;
  const end = rangeEnd({ dateTo: addDays(toDay, 1), timeZone });
  if (end !== undefined && end > Date.now()) {
    const issue = { field: 'toDay', rule: `${UNENDED_RANGE_RULE} (${timeZone})` };
    throw new InputValidationError([issue], 'backfill days');
  }
  const started = [];
  for (let day = fromDay; day <= toDay; day = addDays(day, 1)) {
    const handle = await startVisitorsExport(
      client,
      {
        projectId,
        dateFrom: day,
        dateTo: addDays(day, 1),
        timeZone,
        ...defined({ format, pageSize, concurrency }),
      },
      defined({ taskQueue }),
    );
    started.push({ day, workflowId: handle.workflowId });
  }
  return { timeZone, days: started };
}

export async function deleteVisitorsSchedule(client: Client, projectId: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).delete();
}

/** The memo of the schedule's latest run that has read the destination (kept by the server: no worker needed). */
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
 * The schedule, the zone whose days its runs export, its latest run's memo (null before any), what that run left
 * due (`missing`: failed, or past its cap) and what the next three runs export, computed as the runs do
 * (dueExports over the instants held whole), a zone change included: a run never exports a day that has not ended.
 */
export async function describeVisitorsNightly(client: Client, projectId: string) {
  const schedule = await describeVisitorsSchedule(client, projectId);
  const { options, zone: timeZone } = currentOptions(schedule, projectId);
  const maxCatchUpDays = options.maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS;
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
    scheduleId: schedule.scheduleId,
    timeZone,
    scheduleTimeZone: schedule.spec.timezone ?? 'UTC',
    calendars: schedule.spec.calendars,
    paused: schedule.state.paused,
    note: schedule.state.note,
    latestRun,
    missing,
    failed: latestRun?.failed ?? [],
    maxCatchUpDays,
    nextRuns,
    recentActions: schedule.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
  };
}

export { ScheduleNotFoundError };
