import type { Client, WorkflowHandle } from '@temporalio/client';
import { getProgressQuery } from '../contract/messages';
import {
  DEFAULT_TASK_QUEUE,
  DocsProjectIdKey,
  visitorsExportWorkflowId,
  WorkflowType,
} from '../contract/names';
import { parseOrThrow } from '../contract/validation';
import {
  visitorsExportInputSchema,
  type ExportProgress,
  type VisitorsExportInput,
  type VisitorsExportResult,
} from '../contract/visitors-export';
import type { visitorsExport } from '../workflows/visitors-export';

export type VisitorsExportHandle = WorkflowHandle<typeof visitorsExport>;

/**
 * Starts an export of an explicit range with the deterministic id `visitors-export/<projectId>/<from>_<to>`.
 * Input is validated first: a bad field throws InputValidationError naming it, and nothing is started.
 */
export async function startVisitorsExport(
  client: Client,
  input: VisitorsExportInput & { dateFrom: string; dateTo: string },
  options: { taskQueue?: string } = {},
): Promise<VisitorsExportHandle> {
  parseOrThrow(visitorsExportInputSchema, input, 'visitorsExport input');
  return client.workflow.start<typeof visitorsExport>(WorkflowType.visitorsExport, {
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(input.projectId, input.dateFrom, input.dateTo),
    // A re-run of a finished range is allowed and replaces its files; a running one is not started twice.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [input],
    typedSearchAttributes: [{ key: DocsProjectIdKey, value: input.projectId }],
    staticSummary: `Visitors export ${input.projectId} ${input.dateFrom} → ${input.dateTo}`,
  });
}

export async function runVisitorsExport(
  client: Client,
  input: VisitorsExportInput & { dateFrom: string; dateTo: string },
  options: { taskQueue?: string } = {},
): Promise<VisitorsExportResult> {
  return (await startVisitorsExport(client, input, options)).result();
}

export async function getExportProgress(client: Client, workflowId: string): Promise<ExportProgress> {
  return client.workflow.getHandle(workflowId).query(getProgressQuery);
}
