import { type Command, type CommandUnknownOpts, type OptionValues } from '@commander-js/extra-typings';
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { defined } from '../client/schedule';
import {
  getExportProgress,
  startVisitorsExport,
  visitorsExportStartOptions,
} from '../client/visitors-export';
import { apiDateSchema } from '../contract/api-dates';
import { quoteVisibility, visitorsExportWorkflowId, WorkflowType } from '../contract/names';
import { intFromText as integer } from '../contract/validation';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_EXPORT_FORMAT,
  DEFAULT_PAGE_SIZE,
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  timeZoneSchema,
  visitorsExportInputSchema,
  type ExportProgress,
  type VisitorsExportResult,
} from '../contract/visitors-export';
import type { VisitorsExportWorkflow } from '../contract/nexus-service';
import {
  ExitCode,
  listCommand,
  option,
  print,
  projectOption,
  text,
  UsageError,
  watch,
  type Run,
} from './command';

/** The one convention of every date range on the command line, the service's: the end is excluded. */
export const DATE_RANGE_NOTE =
  "\nDates: --from is the first day, included; --to is the day after the last, excluded (the service's " +
  'dateTo): --from 2026-11-01 --to 2026-11-02 is November 1st alone.';

const { dateFrom, pageSize, concurrency, format, timeZone } = visitorsExportInputSchema.shape;

/** What an option's help says of its absence: its default, or (`defaults` false: an update) that nothing changes. */
export const whenAbsent = (defaults: boolean) => (value: string) =>
  defaults ? ` (default ${value})` : ' (unchanged when not given)';

/** --page-size, --concurrency and --format, the options an export run and a schedule share, with the contract's rules. */
export function exportOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
  defaults: boolean,
) {
  const absent = whenAbsent(defaults);
  return command
    .addOption(
      option(
        '--page-size <n>',
        `rows per page, 1..${MAX_PAGE_SIZE}${absent(String(DEFAULT_PAGE_SIZE))}`,
        integer(pageSize.unwrap()),
      ),
    )
    .addOption(
      option(
        '--concurrency <n>',
        `pages in flight, 1..${MAX_CONCURRENCY}${absent(String(DEFAULT_CONCURRENCY))}`,
        integer(concurrency.unwrap()),
      ),
    )
    .addOption(
      option('--format <format>', `${EXPORT_FORMATS.join(', ')}${absent(DEFAULT_EXPORT_FORMAT)}`, format),
    );
}

const EXECUTION_STATUSES = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;

export function exportCommands(program: CommandUnknownOpts, run: Run): void {
  const exports = program.command('export').description('visitor exports: run, watch, list');

  const started = exports
    .command('run')
    .description('export unique visitors for a date range')
    .addOption(projectOption().makeOptionMandatory())
    .addOption(option('--from <day>', 'first day, YYYY-MM-DD (included)', dateFrom).makeOptionMandatory())
    .addOption(option('--to <day>', 'end day, YYYY-MM-DD (excluded)', dateFrom).makeOptionMandatory())
    .addOption(
      option(
        '--tz <zone>',
        'IANA zone whose days --from/--to name, e.g. Europe/Paris (default UTC, bare dates)',
        timeZone,
      ),
    );
  exportOptions(started, true)
    .option('--detach', 'print the workflow id and return at once (follow with export status)')
    .option(
      '--partial',
      'export a range that has not ended yet, as far as it goes (marked partial, never a whole day)',
    )
    .addHelpText('after', DATE_RANGE_NOTE)
    .action((flags) =>
      run(async ({ client, taskQueue, json }) => {
        const { project: projectId, from: dateFrom, to: dateTo, tz: timeZone, detach: _, ...options } = flags;
        const input = { projectId, dateFrom, dateTo, ...defined({ ...options, timeZone }) };
        // The rules across flags (--to after --from, days with --tz) are checked before connecting too.
        visitorsExportStartOptions(input, { taskQueue });
        const connected = await client();
        const handle = await startVisitorsExport(connected, input, { taskQueue });
        const { workflowId } = handle;
        if (flags.detach || !json) print(json, { workflowId }, `workflow id: ${workflowId}`);
        if (flags.detach) return ExitCode.ok;
        const stopWatching = watchExportProgress(connected, workflowId, json);
        const outcome = await outcomeOf(handle.result()).finally(stopWatching);
        if ('result' in outcome) {
          print(json, outcome.result, describeResult(outcome.result));
          return ExitCode.ok;
        }
        const { text, ...failure } = outcome;
        print(json, failure, `export failed: ${text}`);
        return ExitCode.failed;
      }, 'trace'),
    );

  exports
    .command('status')
    .description("show an export's progress or result")
    .addOption(
      option(
        '--workflow-id <id>',
        "workflow id (visitors-export/<projectId>/<from>_<to>, or a scheduled run's id)",
        text,
      ),
    )
    .addOption(projectOption('project id (with --from and --to, instead of --workflow-id)'))
    .addOption(option('--from <day>', 'first day the export was started with (included)', apiDateSchema))
    .addOption(option('--to <day>', 'end day the export was started with (excluded)', apiDateSchema))
    .addOption(
      option('--tz <zone>', 'the zone the export was started with (export run --tz), if any', timeZoneSchema),
    )
    .addHelpText('after', DATE_RANGE_NOTE)
    .action(({ workflowId, project, from, to, tz }) =>
      run(async ({ client, json }) => {
        if (!workflowId && !(project && from && to)) {
          throw new UsageError('--workflow-id, or --project with --from and --to, is required');
        }
        const id = workflowId || visitorsExportWorkflowId(project ?? '', from ?? '', to ?? '', tz);
        const connected = await client();
        const handle = connected.workflow.getHandle<VisitorsExportWorkflow>(id);
        const workflow = (await handle.describe()).status.name;
        if (workflow === 'RUNNING') {
          const progress = await getExportProgress(connected, id);
          print(json, { workflow, progress }, `RUNNING\n${exportProgressLine(progress)}`);
          return ExitCode.ok;
        }
        const outcome = await outcomeOf(handle.result());
        if ('result' in outcome) {
          print(json, { workflow, result: outcome.result }, `${workflow}\n${describeResult(outcome.result)}`);
          return ExitCode.ok;
        }
        const { text, ...failure } = outcome;
        print(json, { workflow, ...failure }, `${workflow}: ${text}`);
        return ExitCode.failed;
      }),
    );

  listCommand(exports, run, {
    noun: 'export',
    workflowType: WorkflowType.visitorsExport,
    status: `only workflows in this state: ${EXECUTION_STATUSES.join(', ')}`,
    statusRule: z.enum(EXECUTION_STATUSES, { error: `must be one of ${EXECUTION_STATUSES.join(', ')}` }),
    clause: (status) => `ExecutionStatus = ${quoteVisibility(status)}`,
    columns: (execution) => (execution.closeTime ? { closed: execution.closeTime.toISOString() } : {}),
    line: (r) => `${r.workflowId}  ${r.workflowStatus}  ${r.started}${r.closed ? `  ${r.closed}` : ''}`,
  });
}

function describeResult(result: VisitorsExportResult): string {
  return [
    `${result.rows} rows in ${result.pages} pages`,
    ...result.files,
    ...result.warnings.map((w) => `warning: ${w}`),
  ].join('\n');
}

/**
 * A closed export's result, or its failure: the first ApplicationFailure's message (past "Activity task failed"),
 * typed by the root cause (`ExportDestinationUnavailable` under `VisitorsExportPageFailed`).
 */
async function outcomeOf(
  closed: Promise<VisitorsExportResult>,
): Promise<{ result: VisitorsExportResult } | { error: string; type?: string; text: string }> {
  try {
    return { result: await closed };
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const failures: ApplicationFailure[] = [];
    for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
      if (cause instanceof ApplicationFailure) failures.push(cause);
    }
    const message = failures[0]?.message ?? error.cause?.message ?? error.message;
    const type = failures.at(-1)?.type;
    return type ? { error: message, type, text: `${type}: ${message}` } : { error: message, text: message };
  }
}

/** Where the rates start: the first progress read (an export joined midway counts only what it sees happen). */
type RateBase = Pick<ExportProgress, 'pagesDone' | 'rowsDone'> & { atMs: number };

/**
 * One progress line. The total is unknown (the service only says `hasMore`), so there is no bar and no
 * percentage: pages and rows done, their rates since `rates.base` when asked, and what the export waits for.
 */
export function exportProgressLine(
  progress: ExportProgress,
  rates?: { base: RateBase; nowMs: number },
): string {
  const seconds = rates === undefined ? 0 : (rates.nowMs - rates.base.atMs) / 1000;
  const rate = (done: number, from: number): string =>
    seconds < 1 ? '-' : ((done - from) / seconds).toFixed(1);
  return [
    `pages ${progress.pagesDone}`,
    `rows ${progress.rowsDone}`,
    ...(rates === undefined
      ? []
      : [
          `${rate(progress.pagesDone, rates.base.pagesDone)} pages/s`,
          `${rate(progress.rowsDone, rates.base.rowsDone)} rows/s`,
        ]),
    `in flight ${progress.inFlight}`,
    ...(progress.waitingForBudgetUntil === undefined
      ? []
      : [`waiting for budget until ${progress.waitingForBudgetUntil}`]),
    ...(progress.destination === undefined ? [] : [`to ${progress.destination}`]),
  ].join(' · ');
}

/** The progress of an export, a line each time it moves, with the rates since the first read. Nothing with --json. */
function watchExportProgress(client: Client, workflowId: string, json: boolean): () => void {
  if (json) return () => undefined;
  let base: RateBase | undefined;
  return watch(async () => {
    const progress = await getExportProgress(client, workflowId);
    const nowMs = Date.now();
    base ??= { atMs: nowMs, pagesDone: progress.pagesDone, rowsDone: progress.rowsDone };
    return [JSON.stringify(progress), exportProgressLine(progress, { base, nowMs })];
  }, 500);
}
