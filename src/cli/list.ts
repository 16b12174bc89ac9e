import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { DocsProjectIdKey, quoteVisibility } from '../contract/names';
import { intInRange } from '../contract/validation';
import { intFlag, intRule, type FlagDef } from './flags';
import { UsageError } from './usage-error';

export const LIMIT_FLAG: FlagDef = {
  type: 'string',
  description: 'at most this many (default 20)',
  rule: intRule(intInRange(1)),
};

/** `--limit`: at most this many rows, default 20. */
export function limitFlag(value: string | boolean | undefined): number {
  const limit = intFlag(value, 'limit') ?? 20;
  if (limit < 1) throw new UsageError('--limit: must be at least 1');
  return limit;
}

export interface ListedWorkflow {
  workflowId: string;
  workflowStatus: string;
  projectId?: string;
  started: string;
}

/**
 * Workflows of one type from visibility, newest first: of one project (`DocsProjectId`) when given, and matching
 * the extra clauses. `columns` adds a command's own fields to each row.
 */
export async function listWorkflows<E extends object>(
  client: Client,
  filter: { workflowType: string; projectId: string | undefined; clauses?: string[]; limit: number },
  columns: (execution: WorkflowExecutionInfo) => E,
): Promise<(ListedWorkflow & E)[]> {
  const clauses = [`WorkflowType = ${quoteVisibility(filter.workflowType)}`, ...(filter.clauses ?? [])];
  if (filter.projectId) clauses.push(`${DocsProjectIdKey.name} = ${quoteVisibility(filter.projectId)}`);
  const rows: (ListedWorkflow & E)[] = [];
  for await (const execution of client.workflow.list({ query: clauses.join(' AND ') })) {
    const projectId = execution.typedSearchAttributes.get(DocsProjectIdKey);
    rows.push({
      workflowId: execution.workflowId,
      workflowStatus: execution.status.name,
      ...(projectId ? { projectId } : {}),
      started: execution.startTime.toISOString(),
      ...columns(execution),
    });
    if (rows.length >= filter.limit) break;
  }
  return rows;
}
