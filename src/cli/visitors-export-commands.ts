import { ActivityFailure, WorkflowFailedError } from '@temporalio/client';
import { startVisitorsExport } from '../client/visitors-export';
import { watchExportProgress } from './export-progress';
import { EXPORT_FORMATS, type ExportFormat } from '../contract/visitors-export';
import { intFlag, parseFlags, stringFlag, type FlagSpec } from './flags';
import type { CommandContext } from './command-context';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';

export function formatFlag(value: string | boolean | undefined): ExportFormat | undefined {
  const format = stringFlag(value);
  if (format === undefined) return undefined;
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format: must be one of ${EXPORT_FORMATS.join(', ')}`);
  }
  return format as ExportFormat;
}

export const exportRunSpec: FlagSpec = {
  project: { type: 'string', description: 'project id', required: true },
  from: { type: 'string', description: 'first day, YYYY-MM-DD (inclusive)', required: true },
  to: { type: 'string', description: 'end day, YYYY-MM-DD (exclusive)', required: true },
  tz: {
    type: 'string',
    description: 'IANA zone whose days --from/--to name, e.g. Europe/Paris (default UTC, bare dates)',
  },
  'page-size': { type: 'string', description: 'rows per page, 1..250 (default 250)' },
  concurrency: { type: 'string', description: 'pages in flight, 1..16 (default 4)' },
  format: { type: 'string', description: 'csv, ndjson, json or parquet (default csv)' },
};

export async function exportRun(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, exportRunSpec);
  const pageSize = intFlag(flags['page-size'], 'page-size');
  const concurrency = intFlag(flags.concurrency, 'concurrency');
  const format = formatFlag(flags.format);
  const timeZone = stringFlag(flags.tz);
  const input = {
    projectId: stringFlag(flags.project) ?? '',
    dateFrom: stringFlag(flags.from) ?? '',
    dateTo: stringFlag(flags.to) ?? '',
    ...(timeZone === undefined ? {} : { timeZone }),
    ...(pageSize === undefined ? {} : { pageSize }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(format === undefined ? {} : { format }),
  };
  const client = await ctx.client();
  const handle = await startVisitorsExport(client, input, { taskQueue: ctx.taskQueue });
  const json = flags.json === true;
  if (!json) process.stdout.write(`workflow id: ${handle.workflowId}\n`);
  const stopWatching = watchExportProgress(client, handle.workflowId, { json, tty: process.stdout.isTTY });
  try {
    const result = await handle.result();
    stopWatching();
    print(
      json,
      result,
      [
        `${result.rows} rows in ${result.pages} pages`,
        ...result.files,
        ...result.warnings.map((w) => `warning: ${w}`),
      ].join('\n'),
    );
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    // An activity's own failure (a destination that refused the export, say) says more than "Activity task failed".
    const cause =
      error.cause instanceof ActivityFailure && error.cause.cause ? error.cause.cause : error.cause;
    const message = cause?.message ?? error.message;
    print(json, { error: message }, `export failed: ${message}`);
    return ExitCode.failed;
  } finally {
    stopWatching();
  }
}
