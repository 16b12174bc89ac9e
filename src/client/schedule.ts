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
import {
  durationSchema,
  InputValidationError,
  intInRange,
  parseOrThrow,
  projectIdSchema,
} from '../contract/validation';
import {
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  timeZoneSchema,
  type VisitorsExportInput,
} from '../contract/visitors-export';
import type { visitorsExport } from '../workflows/visitors-export';

const timeOfDaySchema = z
  .string({ error: 'must be a string' })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (24-hour)');

const scheduleFields = {
  /** Time of day of the nightly run, HH:MM in `timeZone`. */
  at: timeOfDaySchema,
  /** IANA zone of `at`, and of the "previous day" each run exports. */
  timeZone: timeZoneSchema,
  /** How late a run missed while Temporal was unavailable may still start (default 1 day). */
  catchupWindow: durationSchema.optional(),
  format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
  pageSize: intInRange(1, MAX_PAGE_SIZE).optional(),
  concurrency: intInRange(1, MAX_CONCURRENCY).optional(),
  taskQueue: z.string().min(1, 'must not be empty').optional(),
};

export const visitorsScheduleOptionsSchema = z
  .object({ projectId: projectIdSchema, ...scheduleFields })
  .strict();

const visitorsScheduleChangesSchema = z
  .object({ projectId: projectIdSchema, ...scheduleFields })
  .partial({ at: true, timeZone: true })
  .strict();

export type VisitorsScheduleOptions = z.input<typeof visitorsScheduleOptionsSchema>;
/** An update names the project and the settings that change; the others keep their current values. */
export type VisitorsScheduleChanges = z.input<typeof visitorsScheduleChangesSchema>;

const DEFAULT_CATCHUP_WINDOW = '1 day';

function scheduleOptions(options: VisitorsScheduleOptions): ScheduleOptions {
  const [hour, minute] = options.at.split(':').map(Number) as [number, number];
  // The workflow cannot see the schedule's zone: the input carries it (a CLI-made schedule passes it too).
  const input: VisitorsExportInput = {
    projectId: options.projectId,
    timeZone: options.timeZone,
    ...(options.format === undefined ? {} : { format: options.format }),
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  };
  return {
    scheduleId: visitorsScheduleId(options.projectId),
    spec: { calendars: [{ hour, minute, comment: `nightly at ${options.at}` }], timezone: options.timeZone },
    action: {
      type: 'startWorkflow',
      workflowType: WorkflowType.visitorsExport,
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      // The server appends each run's nominal time to this id.
      workflowId: `${visitorsScheduleId(options.projectId)}/run`,
      args: [input],
      typedSearchAttributes: [{ key: DocsProjectIdKey, value: options.projectId }],
      staticSummary: `Nightly visitors export of ${options.projectId}`,
    },
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: options.catchupWindow ?? DEFAULT_CATCHUP_WINDOW,
    },
  };
}

/**
 * Creates the project's nightly export schedule `visitors-export-nightly/<projectId>`: at `at` in `timeZone`,
 * overlap SKIP; each run exports the previous day in `timeZone`. Options are validated before Temporal is
 * contacted (InputValidationError naming the field); an existing schedule raises ScheduleAlreadyRunning.
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
    const current = currentOptions(previous, valid.projectId);
    const defined = Object.fromEntries(Object.entries(valid).filter(([, value]) => value !== undefined));
    const next = scheduleOptions(
      parseOrThrow(visitorsScheduleOptionsSchema, { ...current, ...defined }, 'schedule options'),
    );
    return {
      ...previous,
      spec: next.spec,
      action: next.action,
      policies: { ...previous.policies, ...next.policies },
    };
  });
}

/** The settings a schedule has now, read back from its description (also for one made with the CLI). */
function currentOptions(
  description: ScheduleDescription,
  projectId: string,
): Partial<VisitorsScheduleOptions> {
  const calendar = description.spec.calendars?.[0];
  const hour = calendar?.hour?.[0]?.start;
  const minute = calendar?.minute?.[0]?.start;
  const action = description.action.type === 'startWorkflow' ? description.action : undefined;
  const input = (action?.args?.[0] ?? {}) as Partial<VisitorsExportInput>;
  return {
    projectId,
    ...(hour === undefined || minute === undefined
      ? {}
      : { at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}` }),
    timeZone: description.spec.timezone ?? input.timeZone ?? 'UTC',
    catchupWindow: description.policies.catchupWindow,
    ...(input.format === undefined ? {} : { format: input.format }),
    ...(input.pageSize === undefined ? {} : { pageSize: input.pageSize }),
    ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
    ...(action === undefined ? {} : { taskQueue: action.taskQueue }),
  };
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

/** Runs the schedule's action now: the export of the day before today in the schedule's zone. */
export async function triggerVisitorsSchedule(client: Client, projectId: string): Promise<void> {
  await visitorsScheduleHandle(client, projectId).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
}

/**
 * Runs every nominal time of the schedule in [start, end): one export per nightly time, each of the day before
 * its own nominal time (a backfill over 3 days writes 3 exports).
 */
export async function backfillVisitorsSchedule(
  client: Client,
  projectId: string,
  range: { start: Date; end: Date },
): Promise<void> {
  if (!(range.start instanceof Date) || Number.isNaN(range.start.getTime())) {
    throw new InputValidationError([{ field: 'start', rule: 'must be a valid date' }], 'backfill range');
  }
  if (!(range.end instanceof Date) || !(range.start < range.end)) {
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
