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
import { intFlag, parseFlags, stringFlag, type FlagSpec } from './flags';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';
import { InputValidationError } from '../contract/validation';
import { formatFlag } from './visitors-export-commands';

const scheduleProject: FlagSpec = { project: { type: 'string', description: 'project id', required: true } };

export const scheduleCreateSpec: FlagSpec = {
  ...scheduleProject,
  at: { type: 'string', description: 'time of day HH:MM', required: true },
  tz: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris (default UTC)' },
  'catchup-window': { type: 'string', description: 'how late a missed run may still start (default 1d)' },
  format: { type: 'string', description: 'csv, ndjson, json or parquet' },
  'page-size': { type: 'string', description: 'rows per page, 1..250' },
  concurrency: { type: 'string', description: 'pages in flight, 1..16' },
  'max-catch-up-days': {
    type: 'string',
    description: 'days one run exports at most when it catches up, 1..100 (default 31)',
  },
};

export const scheduleUpdateSpec: FlagSpec = {
  ...scheduleCreateSpec,
  at: { type: 'string', description: 'time of day HH:MM (unchanged when not given)' },
  tz: { type: 'string', description: 'IANA time zone (unchanged when not given)' },
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
    doneAfterWatermark: n.doneAfterWatermark,
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
        (n.doneAfterWatermark.length > 0 ? ` (also done: ${n.doneAfterWatermark.join(', ')})` : ''),
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
  'from-day': {
    type: 'string',
    description: "first day to export, YYYY-MM-DD in the schedule's zone (included)",
    required: true,
  },
  'to-day': {
    type: 'string',
    description:
      'last day to export, YYYY-MM-DD (included): --from-day 2026-11-09 --to-day 2026-11-11 exports ' +
      'the 9th, 10th and 11th, one export per day, with the schedule settings',
    required: true,
  },
};

export async function scheduleBackfill(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, scheduleBackfillSpec);
  const days = { fromDay: stringFlag(flags['from-day']) ?? '', toDay: stringFlag(flags['to-day']) ?? '' };
  let started;
  try {
    started = await backfillVisitorsSchedule(await ctx.client(), stringFlag(flags.project) ?? '', days);
  } catch (error) {
    // The client names fromDay/toDay: say the flags instead.
    if (!(error instanceof InputValidationError)) throw error;
    const flag = (field: string): string =>
      field === 'fromDay' ? '--from-day' : field === 'toDay' ? '--to-day' : field;
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
