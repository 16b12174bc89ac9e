import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import { getProgressQuery } from '../contract/messages';
import { DocsProjectIdKey, visitorsExportWorkflowId, WorkflowType } from '../contract/names';
import { InputValidationError, parseOrThrow } from '../contract/validation';
import {
  visitorsExportInputSchema,
  type ExportProgress,
  type VisitorsExportInput,
  type VisitorsExportResult,
} from '../contract/visitors-export';
import type { VisitorsExportWorkflow } from '../contract/nexus-service';
import { taskQueueFromEnv } from './connect';

export type VisitorsExportHandle = WorkflowHandle<VisitorsExportWorkflow>;

/** What a caller starts an export with: everything but the workflow's own continuation. */
export type ManualVisitorsExportInput = Omit<VisitorsExportInput, 'continuation'>;

/**
 * How an export starts, input checked first: id `visitors-export/<projectId>/<from>_<to>[_<zone>]`, a running one
 * joined (its options win), a closed one replaced. Shared by `startVisitorsExport` and the Nexus operation.
 */
export function visitorsExportStartOptions(
  input: VisitorsExportInput,
  options: { taskQueue?: string } = {},
): WorkflowStartOptions<VisitorsExportWorkflow> & { workflowId: string } {
  validateManualInput(input);
  return {
    taskQueue: options.taskQueue ?? taskQueueFromEnv(),
    workflowId: visitorsExportWorkflowId(
      input.projectId,
      input.dateFrom,
      input.dateTo,
      input.timeZone,
      input.partial === true,
    ),
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: [{ key: DocsProjectIdKey, value: input.projectId }],
    staticSummary: `Visitors export ${input.projectId} ${input.dateFrom} → ${input.dateTo}${input.timeZone === undefined ? '' : ` (${input.timeZone})`}`,
  };
}

export async function startVisitorsExport(
  client: Client,
  input: ManualVisitorsExportInput,
  options: { taskQueue?: string } = {},
): Promise<VisitorsExportHandle> {
  const start = visitorsExportStartOptions(input, options);
  return client.workflow.start<VisitorsExportWorkflow>(WorkflowType.visitorsExport, start);
}

export async function runVisitorsExport(
  client: Client,
  input: ManualVisitorsExportInput,
  options: { taskQueue?: string } = {},
): Promise<VisitorsExportResult> {
  return (await startVisitorsExport(client, input, options)).result();
}

export async function getExportProgress(client: Client, workflowId: string): Promise<ExportProgress> {
  return client.workflow.getHandle(workflowId).query(getProgressQuery);
}

function validateManualInput(input: VisitorsExportInput): asserts input is ManualVisitorsExportInput {
  const issues: { field: string; rule: string }[] = [];
  for (const field of ['dateFrom', 'dateTo'] as const) {
    if (typeof input[field] !== 'string' || input[field] === '') {
      issues.push({ field, rule: 'is required for an export started by hand' });
    }
  }
  if ('continuation' in input) issues.push({ field: 'continuation', rule: 'is set by the workflow itself' });
  try {
    parseOrThrow(visitorsExportInputSchema, input, 'visitorsExport input');
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    issues.push(...error.issues.filter((issue) => !issues.some((known) => known.field === issue.field)));
  }
  if (issues.length > 0) throw new InputValidationError(issues, 'visitorsExport input');
}
