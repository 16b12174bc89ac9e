import { WorkflowFailedError } from '@temporalio/client';
import { defined } from '../client/schedule';
import { startVisitorsExport, visitorsExportStartOptions } from '../client/visitors-export';
import { watchExportProgress } from './export-progress';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  visitorsExportInputSchema,
  type ExportFormat,
} from '../contract/visitors-export';
import { PROJECT_FLAG, intFlag, intRule, parseFlags, stringFlag, type FlagSpec } from './flags';
import type { CommandContext } from './command-context';
import { print } from './output';
import { describeResult, exportFailure } from './visitors-export-status-commands';
import { ExitCode } from './usage-error';

/** --format, checked by its rule (the contract's enum) before the command runs. */
export function formatFlag(value: string | boolean | undefined): ExportFormat | undefined {
  return stringFlag(value) as ExportFormat | undefined;
}

const { dateFrom, pageSize, concurrency, format, timeZone } = visitorsExportInputSchema.shape;

/** The export options a run and a schedule share, with the contract's rules and defaults. */
export const exportOptionFlags: FlagSpec = {
  'page-size': {
    type: 'string',
    description: `rows per page, 1..${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`,
    rule: intRule(pageSize),
  },
  concurrency: {
    type: 'string',
    description: `pages in flight, 1..${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
    rule: intRule(concurrency),
  },
  format: { type: 'string', description: `${EXPORT_FORMATS.join(', ')} (default csv)`, rule: format },
};

export const exportRunSpec: FlagSpec = {
  project: PROJECT_FLAG,
  from: {
    type: 'string',
    description: 'first day, YYYY-MM-DD (included)',
    required: true,
    rule: dateFrom,
    field: 'dateFrom',
  },
  to: {
    type: 'string',
    description: 'end day, YYYY-MM-DD (excluded)',
    required: true,
    rule: dateFrom,
    field: 'dateTo',
  },
  tz: {
    type: 'string',
    field: 'timeZone',
    description: 'IANA zone whose days --from/--to name, e.g. Europe/Paris (default UTC, bare dates)',
    rule: timeZone,
  },
  ...exportOptionFlags,
  detach: {
    type: 'boolean',
    description: 'print the workflow id and return at once (follow with export status)',
  },
  partial: {
    type: 'boolean',
    description:
      'export a range that has not ended yet, as far as it goes (marked partial, never a whole day)',
  },
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
    ...defined({ timeZone, pageSize, concurrency, format }),
    ...(flags.partial === true ? { partial: true } : {}),
  };
  // The rules across flags (--to after --from, days with --tz) are checked before connecting too.
  visitorsExportStartOptions(input, { taskQueue: ctx.taskQueue });
  const client = await ctx.client();
  const handle = await startVisitorsExport(client, input, { taskQueue: ctx.taskQueue });
  const json = flags.json === true;
  if (flags.detach) {
    print(json, { workflowId: handle.workflowId }, `workflow id: ${handle.workflowId}`);
    return ExitCode.ok;
  }
  if (!json) process.stdout.write(`workflow id: ${handle.workflowId}\n`);
  const stopWatching = watchExportProgress(client, handle.workflowId, { json, tty: process.stdout.isTTY });
  try {
    const result = await handle.result();
    stopWatching();
    print(json, result, describeResult(result));
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const { text, ...failure } = exportFailure(error);
    print(json, failure, `export failed: ${text}`);
    return ExitCode.failed;
  } finally {
    stopWatching();
  }
}
