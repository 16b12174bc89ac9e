import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Task queue used when TEMPORAL_TASK_QUEUE is not set. */
export const DEFAULT_TASK_QUEUE = 'docs-agent';

/** Workflow type names: the exported workflow function names under src/workflows. */
export const WorkflowType = {
  agentJob: 'agentJob',
  visitorsExport: 'visitorsExport',
} as const;

/** Keyword search attributes kept current by the workflows (register them on the namespace). */
export const DocsProjectIdKey = defineSearchAttributeKey('DocsProjectId', SearchAttributeType.KEYWORD);
export const AgentJobIdKey = defineSearchAttributeKey('AgentJobId', SearchAttributeType.KEYWORD);
export const AgentJobStatusKey = defineSearchAttributeKey('AgentJobStatus', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [DocsProjectIdKey, AgentJobIdKey, AgentJobStatusKey] as const;

/** Workflow ids are deterministic and meaningful, so a retried start never creates a second job. */
export const workflowIdPrefix = {
  agentJob: 'agent-job',
  visitorsExport: 'visitors-export',
} as const;

export function agentJobWorkflowId(projectId: string, key: string): string {
  return `${workflowIdPrefix.agentJob}/${projectId}/${key}`;
}

export function visitorsExportWorkflowId(projectId: string, dateFrom: string, dateTo: string): string {
  return `${workflowIdPrefix.visitorsExport}/${projectId}/${dateFrom}_${dateTo}`;
}

export function visitorsScheduleId(projectId: string): string {
  return `${workflowIdPrefix.visitorsExport}-nightly/${projectId}`;
}
