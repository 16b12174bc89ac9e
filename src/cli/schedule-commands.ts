import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  pauseVisitorsSchedule,
  triggerVisitorsSchedule,
  unpauseVisitorsSchedule,
  updateVisitorsSchedule,
  type VisitorsScheduleChanges,
} from '../client/schedule';
import { describeVisitorsNightly } from '../client/schedule-nightly';
import type { CommandContext } from './command-context';
import { PROJECT_FLAG, intFlag, intRule, parseFlags, stringFlag, type FlagSpec } from './flags';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';
import { durationSchema, InputValidationError } from '../contract/validation';
import { apiDateSchema } from '../contract/api-dates';
import { DEFAULT_MAX_CATCH_UP_DAYS, MAX_CATCH_UP_DAYS } from '../contract/nightly';
import { addDays } from '../contract/zone-days';
import { visitorsScheduleOptionsSchema } from '../client/schedule';
import { exportOptionFlags, formatFlag } from './visitors-export-commands';

export const scheduleProject: FlagSpec = { project: PROJECT_FLAG };

const { at, timeZone, maxCatchUpDays } = visitorsScheduleOptionsSchema.shape;

export const scheduleCreateSpec: FlagSpec = {
  ...scheduleProject,
  at: { type: 'string', description: 'time of day HH:MM (24-hour)', required: true, rule: at },
  tz: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris (default UTC)', rule: timeZone },
  'catchup-window': {
    type: 'string',
    description: 'how late a missed run may still start, e.g. 12h (default 1 day)',
    rule: durationSchema,
  },
  ...exportOptionFlags,
  'max-catch-up-days': {
    type: 'string',
    description: `days one run exports at most when it catches up, 1..${MAX_CATCH_UP_DAYS} (default ${DEFAULT_MAX_CATCH_UP_DAYS})`,
    rule: intRule(maxCatchUpDays),
  },
};

/** Every setting not given keeps its current value: update promises no default. */
export const scheduleUpdateSpec: FlagSpec = {
  ...Object.fromEntries(
    Object.entries(scheduleCreateSpec).map(([name, flag]) => [
      name,
      name === 'project'
        ? flag
        : {
            ...flag,
            required: false,
            description: `${flag.description.replace(/ \(default [^)]*\)$/, '')} (unchanged when not given)`,
          },
    ]),
  ),
  'task-queue': { type: 'string', description: 'task queue of the runs (unchanged when not given)' },
};

/** The schedule settings given on the command line; a flag not given is left out. */
function scheduleFlagsOf(
  argv: string[],
  spec: FlagSpec,
): { changes: VisitorsScheduleChanges; json: boolean } {
  const flags = parseFlags(argv, spec);
  const pageSize = intFlag(flags['page-size'], 'page-size');
  const concurrency = intFlag(flags.concurrency, 'concurrency');
  const maxCatchUpDays = intFlag(flags['max-catch-up-days'], 'max-catch-up-days');
  const format = formatFlag(flags.format);
  const at = stringFlag(flags.at);
  const timeZone = stringFlag(flags.tz);
  const catchupWindow = stringFlag(flags['catchup-window']);
  return {
    json: flags.json === true,
    changes: {
      projectId: stringFlag(flags.project) ?? '',
      ...(at === undefined ? {} : { at }),
      ...(timeZone === undefined ? {} : { timeZone }),
      ...(catchupWindow === undefined ? {} : { catchupWindow }),
      ...(format === undefined ? {} : { format }),
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(maxCatchUpDays === undefined ? {} : { maxCatchUpDays }),
    },
  };
}

export async function scheduleCreate(argv: string[], ctx: CommandContext): Promise<number> {
  const { changes, json } = scheduleFlagsOf(argv, scheduleCreateSpec);
  const handle = await createVisitorsSchedule(await ctx.client(), {
    ...changes,
    at: changes.at ?? '',
    timeZone: changes.timeZone ?? 'UTC',
    taskQueue: ctx.taskQueue,
  });
  print(json, { scheduleId: handle.scheduleId }, `schedule id: ${handle.scheduleId}`);
  return ExitCode.ok;
}

export async function scheduleUpdate(argv: string[], ctx: CommandContext): Promise<number> {
  const { changes, json } = scheduleFlagsOf(argv, scheduleUpdateSpec);
  // The schedule keeps its task queue unless --task-queue names another (not the caller's TEMPORAL_TASK_QUEUE).
  const taskQueue = stringFlag(parseFlags(argv, scheduleUpdateSpec)['task-queue']);
  await updateVisitorsSchedule(await ctx.client(), {
    ...changes,
    ...(taskQueue === undefined ? {} : { taskQueue }),
  });
  print(json, { updated: changes.projectId }, 'updated');
  return ExitCode.ok;
}

export async function scheduleDescribe(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, scheduleProject);
  const n = await describeVisitorsNightly(await ctx.client(), stringFlag(flags.project) ?? '');
  const d = n.schedule;
  const summary = {
    scheduleId: d.scheduleId,
    timeZone: n.timeZone,
    scheduleTimeZone: d.spec.timezone ?? 'UTC',
    calendars: d.spec.calendars,
    paused: d.state.paused,
    note: d.state.note,
    watermark: n.watermark,
    watermarkTimeZone: n.watermarkTimeZone,
    doneAfterWatermark: n.doneAfterWatermark,
    failed: n.failed,
    bridge: n.bridge,
    closed: n.closed,
    maxCatchUpDays: n.maxCatchUpDays,
    nextRuns: n.nextRuns,
    nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    recentActions: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
  };
  const [next] = n.nextRuns;
  print(
    flags.json === true,
    summary,
    [
      `${summary.scheduleId} (${summary.paused ? 'paused' : 'active'}) in ${summary.scheduleTimeZone}, exports days of ${n.timeZone}`,
      `watermark: ${n.watermark ?? 'none yet (the first run exports the day before it)'}` +
        (n.watermarkTimeZone !== null && n.watermarkTimeZone !== n.timeZone
          ? ` in ${n.watermarkTimeZone} (the next run carries it over to ${n.timeZone})`
          : '') +
        (n.doneAfterWatermark.length > 0 ? ` (also done: ${n.doneAfterWatermark.join(', ')})` : ''),
      ...n.failed.map((f) => `failed: ${f.day}: ${f.error} (each run exports it again)`),
      ...(n.bridge === null
        ? []
        : [`zone change: ${n.bridge.dateFrom} → ${n.bridge.dateTo} still to export as one range`]),
      ...(n.closed === null
        ? []
        : [`closed: the watermark of ${n.closed.timeZone} at ${n.closed.watermark}`]),
      next === undefined
        ? 'next run: -'
        : `next run: ${next.at} exports ${next.days.length === 0 ? 'nothing' : next.days.join(', ')}` +
          (next.remaining > 0 ? ` (${next.remaining} more day(s) left to later runs)` : ''),
      `recent runs: ${summary.recentActions.length}`,
    ].join('\n'),
  );
  return ExitCode.ok;
}

const simple = {
  pause: pauseVisitorsSchedule,
  unpause: unpauseVisitorsSchedule,
  trigger: triggerVisitorsSchedule,
  delete: deleteVisitorsSchedule,
} as const;

export function scheduleSimple(name: keyof typeof simple) {
  return async (argv: string[], ctx: CommandContext): Promise<number> => {
    const flags = parseFlags(argv, scheduleProject);
    await simple[name](await ctx.client(), stringFlag(flags.project) ?? '');
    print(flags.json === true, { [name]: stringFlag(flags.project) }, `${name}: done`);
    return ExitCode.ok;
  };
}

export const scheduleBackfillSpec: FlagSpec = {
  ...scheduleProject,
  from: {
    type: 'string',
    description: "first day to export, YYYY-MM-DD of the schedule's zone (included)",
    required: true,
    rule: apiDateSchema,
  },
  to: {
    type: 'string',
    description:
      'end day, YYYY-MM-DD (excluded): --from 2026-11-09 --to 2026-11-12 exports the 9th, 10th and 11th, ' +
      'one export per day, with the schedule settings',
    required: true,
    rule: apiDateSchema,
  },
};

export async function scheduleBackfill(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, scheduleBackfillSpec);
  const from = stringFlag(flags.from) ?? '';
  const to = stringFlag(flags.to) ?? '';
  if (!/^\d{4}-\d{2}-\d{2}$/.test(from) || !/^\d{4}-\d{2}-\d{2}$/.test(to)) {
    throw new UsageError("--from, --to: must be days YYYY-MM-DD (days of the schedule's zone)");
  }
  if (to <= from) throw new UsageError('--to: must be after --from (the end day is excluded)');
  const days = { fromDay: from, toDay: addDays(to, -1) };
  let started;
  try {
    started = await backfillVisitorsSchedule(await ctx.client(), stringFlag(flags.project) ?? '', days);
  } catch (error) {
    // The client names fromDay/toDay (both included): say the flags instead.
    if (!(error instanceof InputValidationError)) throw error;
    const flag = (field: string): string =>
      field === 'fromDay' ? '--from' : field === 'toDay' ? '--to' : field;
    throw new UsageError(error.issues.map((issue) => `${flag(issue.field)}: ${issue.rule}`).join('; '));
  }
  print(
    flags.json === true,
    started,
    [
      `exporting ${started.days.length} day(s) of ${started.timeZone}:`,
      ...started.days.map((d) => `  ${d.day}  ${d.workflowId}`),
    ].join('\n'),
  );
  return ExitCode.ok;
}
