import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  defined,
  deleteVisitorsSchedule,
  describeVisitorsNightly,
  pauseVisitorsSchedule,
  triggerVisitorsSchedule,
  unpauseVisitorsSchedule,
  updateVisitorsSchedule,
  visitorsScheduleOptionsSchema,
  type VisitorsScheduleChanges,
} from '../client/schedule';
import { apiDateSchema } from '../contract/api-dates';
import { DEFAULT_MAX_CATCH_UP_DAYS, MAX_CATCH_UP_DAYS } from '../contract/nightly';
import { durationSchema, intFromText as integer } from '../contract/validation';
import { addDays, isDay } from '../contract/zone-days';
import {
  ExitCode,
  option,
  print,
  projectOption,
  text,
  UsageError,
  type CommandContext,
  type Run,
} from './command';
import { DATE_RANGE_NOTE, exportOptions, whenAbsent } from './export-commands';

const { at, timeZone, maxCatchUpDays } = visitorsScheduleOptionsSchema.shape;

/**
 * `schedule create` and `schedule update`: a schedule's settings. Create requires --at and says each default;
 * update keeps every setting not given (the task queue too, not the caller's TEMPORAL_TASK_QUEUE).
 */
function settingsCommand(
  schedule: CommandUnknownOpts,
  run: Run,
  create: boolean,
  act: (changes: VisitorsScheduleChanges, ctx: CommandContext) => Promise<number>,
): void {
  const absent = whenAbsent(create);
  const command = schedule
    .command(create ? 'create' : 'update')
    .description(
      create ? "create a project's nightly export schedule" : 'change time, zone or export options',
    )
    .addOption(projectOption().makeOptionMandatory())
    .addOption(
      option(
        '--at <HH:MM>',
        `time of day HH:MM (24-hour)${create ? '' : absent('')}`,
        at,
      ).makeOptionMandatory(create),
    )
    .addOption(option('--tz <zone>', `IANA time zone, e.g. Europe/Paris${absent('UTC')}`, timeZone))
    .addOption(
      option(
        '--catchup-window <duration>',
        `how late a missed run may still start, e.g. 12h${absent('1 day')}`,
        durationSchema,
      ),
    )
    .addOption(
      option(
        '--max-catch-up-days <n>',
        `days one run exports at most when it catches up, 1..${MAX_CATCH_UP_DAYS}${absent(String(DEFAULT_MAX_CATCH_UP_DAYS))}`,
        integer(maxCatchUpDays.unwrap()),
      ),
    )
    .addOption(option('--task-queue <name>', `task queue of the runs${absent('TEMPORAL_TASK_QUEUE')}`, text));
  exportOptions(command, create).action((flags) =>
    run((ctx) => {
      const { project: projectId, tz: timeZone, ...settings } = flags;
      return act({ projectId, ...defined({ ...settings, timeZone }) }, ctx);
    }),
  );
}

export function scheduleCommands(program: CommandUnknownOpts, run: Run): void {
  const schedule = program.command('schedule').description("a project's nightly export schedule");
  settingsCommand(schedule, run, true, async (changes, { client, taskQueue, json }) => {
    const { at = '', timeZone = 'UTC' } = changes;
    const options = { ...changes, at, timeZone, taskQueue: changes.taskQueue ?? taskQueue };
    const { scheduleId } = await createVisitorsSchedule(await client(), options);
    print(json, { scheduleId }, `schedule id: ${scheduleId}`);
    return ExitCode.ok;
  });
  settingsCommand(schedule, run, false, async (changes, { client, json }) => {
    await updateVisitorsSchedule(await client(), changes);
    print(json, { updated: changes.projectId }, 'updated');
    return ExitCode.ok;
  });

  schedule
    .command('describe')
    .description('show a schedule')
    .addOption(projectOption().makeOptionMandatory())
    .action(({ project }) =>
      run(async ({ client, json }) => {
        const n = await describeVisitorsNightly(await client(), project);
        const [next] = n.nextRuns;
        const lines = [
          `${n.scheduleId} (${n.paused ? 'paused' : 'active'}) in ${n.scheduleTimeZone}, exports days of ${n.timeZone}`,
          n.latestRun === null
            ? 'latest run: none yet (the first run exports the day before it)'
            : `latest run: ${n.latestRun.workflowId}, through ${n.latestRun.through} (${n.latestRun.timeZone})`,
          `missing: ${n.missing.length === 0 ? 'nothing' : n.missing.join(', ')}`,
          ...n.failed.map((f) => `failed: ${f.day}: ${f.error} (each run exports it again)`),
          next === undefined
            ? 'next run: -'
            : `next run: ${next.at} exports ${next.days.length === 0 ? 'nothing' : next.days.join(', ')}` +
              (next.remaining > 0 ? ` (${next.remaining} more day(s) left to later runs)` : ''),
          `recent runs: ${n.recentActions.length}`,
        ];
        print(json, n, lines.join('\n'));
        return ExitCode.ok;
      }),
    );

  for (const [name, description, act] of [
    ['pause', 'pause a schedule', pauseVisitorsSchedule],
    ['unpause', 'resume a schedule', unpauseVisitorsSchedule],
    ['trigger', 'run a schedule now (exports every day due up to yesterday)', triggerVisitorsSchedule],
    ['delete', 'delete a schedule', deleteVisitorsSchedule],
  ] as const) {
    schedule
      .command(name)
      .description(description)
      .addOption(projectOption().makeOptionMandatory())
      .action(({ project }) =>
        run(async ({ client, json }) => {
          await act(await client(), project);
          print(json, { [name]: project }, `${name}: done`);
          return ExitCode.ok;
        }),
      );
  }

  const day = apiDateSchema.refine(isDay, "must be a day YYYY-MM-DD (a day of the schedule's zone)");
  schedule
    .command('backfill')
    .description("export past days (--from..--to, --to excluded) with a schedule's settings")
    .addOption(projectOption().makeOptionMandatory())
    .addOption(
      option(
        '--from <day>',
        "first day to export, YYYY-MM-DD of the schedule's zone (included)",
        day,
      ).makeOptionMandatory(),
    )
    .addOption(
      option(
        '--to <day>',
        'end day, YYYY-MM-DD (excluded): --from 2026-11-09 --to 2026-11-12 exports the 9th, 10th and 11th, ' +
          'one export per day, with the schedule settings',
        day,
      ).makeOptionMandatory(),
    )
    .addHelpText('after', DATE_RANGE_NOTE)
    .action(({ project, from, to }) =>
      run(async ({ client, json }) => {
        if (to <= from) throw new UsageError('--to: must be after --from (the end day is excluded)');
        const toDay = addDays(to, -1);
        const started = await backfillVisitorsSchedule(await client(), project, { fromDay: from, toDay });
        const lines = [
          `exporting ${started.days.length} day(s) of ${started.timeZone}:`,
          ...started.days.map((d) => `  ${d.day}  ${d.workflowId}`),
        ];
        print(json, started, lines.join('\n'));
        return ExitCode.ok;
      }),
    );
}
