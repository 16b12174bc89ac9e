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
import { describeVisitorsNightly } from '../client/schedule';
import { defined } from '../client/schedule';
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
  const changes = defined({
    at: stringFlag(flags.at),
    timeZone: stringFlag(flags.tz),
    catchupWindow: stringFlag(flags['catchup-window']),
    format: formatFlag(flags.format),
    pageSize: intFlag(flags['page-size'], 'page-size'),
    concurrency: intFlag(flags.concurrency, 'concurrency'),
    maxCatchUpDays: intFlag(flags['max-catch-up-days'], 'max-catch-up-days'),
    // Update only: the schedule keeps its task queue unless named (not the caller's TEMPORAL_TASK_QUEUE).
    taskQueue: stringFlag(flags['task-queue']),
  });
  return { json: flags.json === true, changes: { projectId: stringFlag(flags.project) ?? '', ...changes } };
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
  await updateVisitorsSchedule(await ctx.client(), changes);
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
    latestRun: n.latestRun,
    missing: n.missing,
    failed: n.failed,
    maxCatchUpDays: n.maxCatchUpDays,
    nextRuns: n.nextRuns,
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
      n.latestRun === null
        ? 'latest run: none yet (the first run exports the day before it)'
        : `latest run: ${n.latestRun.workflowId}, through ${n.latestRun.through} (${n.latestRun.timeZone})`,
      `missing: ${n.missing.length === 0 ? 'nothing' : n.missing.join(', ')}`,
      ...n.failed.map((f) => `failed: ${f.day}: ${f.error} (each run exports it again)`),
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
