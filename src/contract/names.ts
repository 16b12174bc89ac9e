import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Task queue used when TEMPORAL_TASK_QUEUE is not set. */
export const DEFAULT_TASK_QUEUE = 'docs-agent';

/** Workflow type names: the exported workflow function names under src/workflows. */
export const WorkflowType = {
  agentJob: 'agentJob',
  /** The record of a job's create, kept outside the job's runs (see agentJobCreateRecordId). */
  agentJobCreateRecord: 'agentJobCreateRecord',
  visitorsExport: 'visitorsExport',
  visitorsNightly: 'visitorsNightly',
  visitorsNightlyWatermark: 'visitorsNightlyWatermark',
} as const;

/** The Nexus service the worker serves on its task queue, and its operations (each runs the workflow of its name). */
export const NEXUS_SERVICE = 'docs-agent';
/** The Nexus endpoint name the docs and `npm run dev` use; operators may choose another. */
export const DEFAULT_NEXUS_ENDPOINT = 'docs-agent';

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

/**
 * `agent-job-created/<projectId>/<key>`: the record of the job the agentJob workflow `agent-job/<projectId>/<key>`
 * created, written by the create activity as soon as the service answered. It outlives the runs of the job's
 * workflow: a run terminated mid-create, or reset to before its create, finds the job there, never creates a second.
 */
export function agentJobCreateRecordId(agentJobWorkflowId: string): string {
  return agentJobWorkflowId.replace(/^agent-job\//, `${workflowIdPrefix.agentJob}-created/`);
}

/**
 * `visitors-export/<projectId>/<dateFrom>_<dateTo>`, and `_<zone>` when the dates are days of a zone other than UTC
 * (`…/2026-11-09_2026-11-10_Europe-Paris`): the same dates in two zones are two exports. A partial export (of a
 * range that had not ended) ends in `_partial`: the nightly export never takes it for the whole day.
 */
export function visitorsExportWorkflowId(
  projectId: string,
  dateFrom: string,
  dateTo: string,
  timeZone?: string,
  partial = false,
): string {
  const suffix = `${zoneSuffix(timeZone)}${partial ? PARTIAL_SUFFIX : ''}`;
  return `${workflowIdPrefix.visitorsExport}/${projectId}/${dateFrom}_${dateTo}${suffix}`;
}

/** Ends the id and folder of an export of a range that had not ended: never taken as a whole day. */
export const PARTIAL_SUFFIX = '_partial';

/** `_Europe-Paris` for a zone other than UTC ('/' becomes '-'), '' for UTC or no zone. */
export function zoneSuffix(timeZone: string | undefined): string {
  return timeZone === undefined || timeZone === 'UTC' ? '' : `_${timeZone.replace(/\//g, '-')}`;
}

export function visitorsScheduleId(projectId: string): string {
  return `${workflowIdPrefix.visitorsExport}-nightly/${projectId}`;
}
