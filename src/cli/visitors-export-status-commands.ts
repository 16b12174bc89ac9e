import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { z } from 'zod';
import { getExportProgress } from '../client/visitors-export';
import { quoteVisibility, visitorsExportWorkflowId, WorkflowType } from '../contract/names';
import { timeZoneSchema, type VisitorsExportResult } from '../contract/visitors-export';
import { apiDateSchema } from '../contract/api-dates';
import { parseOrThrow, projectIdSchema } from '../contract/validation';
import type { VisitorsExportWorkflow } from '../contract/workflow-types';
import type { CommandContext } from './command-context';
import { exportProgressLine } from './export-progress';
import { parseFlags, stringFlag, type Flags, type FlagSpec } from './flags';
import { LIMIT_FLAG, limitFlag, listWorkflows } from './list';
import { print } from './output';
import { ExitCode, UsageError } from './usage-error';

export const exportStatusSpec: FlagSpec = {
  'workflow-id': {
    type: 'string',
    description: "workflow id (visitors-export/<projectId>/<from>_<to>, or a scheduled run's id)",
  },
  project: {
    type: 'string',
    description: 'project id (with --from and --to, instead of --workflow-id)',
    rule: projectIdSchema,
  },
  from: {
    type: 'string',
    description: 'first day the export was started with (included)',
    rule: apiDateSchema,
  },
  to: { type: 'string', description: 'end day the export was started with (excluded)', rule: apiDateSchema },
  tz: {
    type: 'string',
    description: 'the zone the export was started with (export run --tz), if any',
    rule: timeZoneSchema,
  },
};

function exportWorkflowIdOf(flags: Flags): string {
  const id = stringFlag(flags['workflow-id']);
  if (id) return id;
  const project = stringFlag(flags.project);
  const from = stringFlag(flags.from);
  const to = stringFlag(flags.to);
  if (project && from && to) {
    const projectId = parseOrThrow(projectIdSchema, project, 'projectId');
    return visitorsExportWorkflowId(projectId, from, to, stringFlag(flags.tz));
  }
  throw new UsageError('--workflow-id, or --project with --from and --to, is required');
}

/** A finished export's result as the CLI prints it. */
export function describeResult(result: VisitorsExportResult): string {
  return [
    `${result.rows} rows in ${result.pages} pages`,
    ...result.files,
    ...result.warnings.map((w) => `warning: ${w}`),
  ].join('\n');
}

/**
 * A failed export's message: its first ApplicationFailure's (past "Activity task failed"), typed by the root
 * cause (`ExportDestinationUnavailable` under `VisitorsExportPageFailed`).
 */
export function exportFailure(error: WorkflowFailedError): { error: string; type?: string; text: string } {
  const failures: ApplicationFailure[] = [];
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure) failures.push(cause);
  }
  const message = failures[0]?.message ?? error.cause?.message ?? error.message;
  const type = failures.at(-1)?.type ?? undefined;
  return type ? { error: message, type, text: `${type}: ${message}` } : { error: message, text: message };
}

/** A running export's progress, a finished one's result; a failed, cancelled or timed-out one exits 1. */
export async function exportStatus(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, exportStatusSpec);
  const workflowId = exportWorkflowIdOf(flags);
  const json = flags.json === true;
  const client = await ctx.client();
  const handle = client.workflow.getHandle<VisitorsExportWorkflow>(workflowId);
  const description = await handle.describe();
  const workflow = description.status.name;
  if (workflow === 'RUNNING') {
    const progress = await getExportProgress(client, workflowId);
    print(json, { workflow, progress }, `RUNNING\n${exportProgressLine(progress)}`);
    return ExitCode.ok;
  }
  try {
    const result = await handle.result();
    print(json, { workflow, result }, `${workflow}\n${describeResult(result)}`);
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const { text, ...failure } = exportFailure(error);
    print(json, { workflow, ...failure }, `${workflow}: ${text}`);
    return ExitCode.failed;
  }
}

const EXECUTION_STATUSES = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;

export const exportListSpec: FlagSpec = {
  project: {
    type: 'string',
    description: 'only exports of this project (DocsProjectId)',
    rule: projectIdSchema,
  },
  status: {
    type: 'string',
    description: `only workflows in this state: ${EXECUTION_STATUSES.join(', ')}`,
    rule: z.enum(EXECUTION_STATUSES, { error: `must be one of ${EXECUTION_STATUSES.join(', ')}` }),
  },
  limit: LIMIT_FLAG,
};

/** Exports (manual and scheduled runs) from visibility, newest first. */
export async function exportList(argv: string[], ctx: CommandContext): Promise<number> {
  const flags = parseFlags(argv, exportListSpec);
  const limit = limitFlag(flags.limit);
  const status = stringFlag(flags.status);
  const rows = await listWorkflows(
    await ctx.client(),
    {
      workflowType: WorkflowType.visitorsExport,
      projectId: stringFlag(flags.project),
      clauses: status ? [`ExecutionStatus = ${quoteVisibility(status)}`] : [],
      limit,
    },
    (execution) => (execution.closeTime ? { closed: execution.closeTime.toISOString() } : {}),
  );
  print(
    flags.json === true,
    rows,
    rows.length === 0
      ? 'no exports'
      : rows
          .map((r) => `${r.workflowId}  ${r.workflowStatus}  ${r.started}${r.closed ? `  ${r.closed}` : ''}`)
          .join('\n'),
  );
  return ExitCode.ok;
}
