import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptions,
} from '@temporalio/client';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE, DocsProjectIdKey, visitorsScheduleId, WorkflowType } from '../contract/names';
import { durationSchema, InputValidationError, parseOrThrow, projectIdSchema } from '../contract/validation';
import {
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  type VisitorsExportInput,
} from '../contract/visitors-export';
import type { visitorsExport } from '../workflows/visitors-export';

const timeOfDaySchema = z
  .string({ error: 'must be a string' })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (24-hour)');

const timeZoneSchema = z.string().refine((zone) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}, 'must be an IANA time zone such as "UTC" or "Europe/Paris"');

export const visitorsScheduleOptionsSchema = z
  .object({
    projectId: projectIdSchema,
    at: timeOfDaySchema,
    timeZone: timeZoneSchema,
    catchupWindow: durationSchema.optional(),
    format: z.enum(EXPORT_FORMATS).optional(),
    pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
    taskQueue: z.string().min(1).optional(),
  })
  .strict();

export type VisitorsScheduleOptions = z.input<typeof visitorsScheduleOptionsSchema>;

const DEFAULT_CATCHUP_WINDOW = '1 day';

function scheduleOptions(raw: VisitorsScheduleOptions): ScheduleOptions {
  const options = parseOrThrow(visitorsScheduleOptionsSchema, raw, 'schedule options');
  const [hour, minute] = options.at.split(':').map(Number) as [number, number];
  const input: VisitorsExportInput = {
    projectId: options.projectId,
    timeZone: options.timeZone,
    ...(options.format ? { format: options.format } : {}),
    ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  };
  return {
    scheduleId: visitorsScheduleId(options.projectId),
    spec: { calendars: [{ hour, minute, comment: `nightly at ${options.at}` }], timezone: options.timeZone },
    action: {
      type: 'startWorkflow',
      workflowType: WorkflowType.visitorsExport,
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      workflowId: `${visitorsScheduleId(options.projectId)}/run`,
      args: [input],
      typedSearchAttributes: [{ key: DocsProjectIdKey, value: options.projectId }],
      staticSummary: `Nightly visitors export of ${options.projectId}`,
    },
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: options.catchupWindow ?? DEFAULT_CATCHUP_WINDOW,
    },
    memo: { projectId: options.projectId, timeZone: options.timeZone, at: options.at },
  };
}

/** Creates the project's nightly export schedule: each run exports the previous day in `timeZone`. */
export async function createVisitorsSchedule(
  client: Client,
  options: VisitorsScheduleOptions,
): Promise<ScheduleHandle> {
  return client.schedule.create(scheduleOptions(options));
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

/** Replaces time of day, zone and export options; the schedule keeps its id and history of runs. */
export async function updateVisitorsSchedule(
  client: Client,
  options: VisitorsScheduleOptions,
): Promise<void> {
  const next = scheduleOptions(options);
  await visitorsScheduleHandle(client, options.projectId).update((previous) => ({
    ...previous,
    spec: next.spec,
    action: next.action,
    policies: { ...previous.policies, ...next.policies },
  }));
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

/** Runs the schedule's action now: the export of the day before today (in the schedule's zone). */
export async function triggerVisitorsSchedule(client: Client, projectId: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
}

/** Runs every nominal time in [start, end): one export per past day, each of its own previous day. */
export async function backfillVisitorsSchedule(
  client: Client,
  projectId: string,
  range: { start: Date; end: Date },
): Promise<void> {
  if (!(range.start < range.end)) {
    throw new InputValidationError([{ field: 'end', rule: 'must be after start' }], 'backfill range');
  }
  await visitorsScheduleHandle(client, projectId).backfill({
    start: range.start,
    end: range.end,
    overlap: ScheduleOverlapPolicy.ALLOW_ALL,
  });
}

export async function deleteVisitorsSchedule(client: Client, projectId: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).delete();
}

export { ScheduleNotFoundError };
export type VisitorsExportWorkflow = typeof visitorsExport;
