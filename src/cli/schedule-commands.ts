import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  describeVisitorsSchedule,
  pauseVisitorsSchedule,
  triggerVisitorsSchedule,
  unpauseVisitorsSchedule,
  updateVisitorsSchedule,
  type VisitorsScheduleChanges,
} from '../client/schedule';
import { API_DATE_RULE, parseApiDate } from '../contract/api-dates';
import type { CommandContext } from './command-context';
import { intFlag, parseFlags, stringFlag, type FlagSpec } from './flags';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';
import { formatFlag } from './visitors-export-commands';

const scheduleProject: FlagSpec = { project: { type: 'string', description: 'project id', required: true } };

export const scheduleCreateSpec: FlagSpec = {
  ...scheduleProject,
  at: { type: 'string', description: 'time of day HH:MM', required: true },
  tz: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris (default UTC)' },
  'catchup-window': { type: 'string', description: 'how late a missed run may still start (default 1d)' },
  format: { type: 'string', description: 'csv, ndjson or json' },
  'page-size': { type: 'string', description: 'rows per page, 1..250' },
  concurrency: { type: 'string', description: 'pages in flight, 1..16' },
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
  const d = await describeVisitorsSchedule(await ctx.client(), stringFlag(flags.project) ?? '');
  const summary = {
    scheduleId: d.scheduleId,
    timeZone: d.spec.timezone ?? 'UTC',
    calendars: d.spec.calendars,
    paused: d.state.paused,
    note: d.state.note,
    nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    recentActions: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
  };
  print(
    flags.json === true,
    summary,
    [
      `${summary.scheduleId} (${summary.paused ? 'paused' : 'active'}) in ${summary.timeZone}`,
      `next runs: ${summary.nextActionTimes.slice(0, 3).join(', ') || '-'}`,
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
  from: { type: 'string', description: 'first nominal time, YYYY-MM-DD or ISO date-time', required: true },
  to: { type: 'string', description: 'end of nominal times (exclusive)', required: true },
};

export async function scheduleBackfill(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, scheduleBackfillSpec);
  const bound = (name: 'from' | 'to'): Date => {
    const ms = parseApiDate(stringFlag(flags[name]) ?? '');
    if (ms === undefined) throw new UsageError(`--${name}: ${API_DATE_RULE}`);
    return new Date(ms);
  };
  const start = bound('from');
  const end = bound('to');
  if (!(start < end)) throw new UsageError('--to: must be after --from');
  await backfillVisitorsSchedule(await ctx.client(), stringFlag(flags.project) ?? '', { start, end });
  print(
    flags.json === true,
    { backfilled: { from: start.toISOString(), to: end.toISOString() } },
    'backfill requested',
  );
  return ExitCode.ok;
}
