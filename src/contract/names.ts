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

/** A value inside a visibility query, quoted so that no input can change the query. */
export function quoteVisibility(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Workflow ids are deterministic and meaningful, so a retried start never creates a second job. */
export const workflowIdPrefix = {
  agentJob: 'agent-job',
  visitorsExport: 'visitors-export',
} as const;

export function agentJobWorkflowId(projectId: string, key: string): string {
  return `${workflowIdPrefix.agentJob}/${projectId}/${key}`;
}

/**
 * A create record's id: this prefix and the SHA-256 of the job's workflow id (client/agent-job-runs.ts), so it
 * never depends on the workflow id's shape or length. An agentJob refuses to run under such an id.
 */
export const CREATE_RECORD_ID_PREFIX = `${WorkflowType.agentJobCreateRecord}:`;

/** Why an agentJob may not run under this workflow id, or undefined when it may. */
export function agentJobWorkflowIdIssue(workflowId: string): string | undefined {
  return /^agentJobCreateRecord:[0-9a-f]{64}$/.test(workflowId)
    ? `must not be "${CREATE_RECORD_ID_PREFIX}" and 64 hex digits (the id of a create record)`
    : undefined;
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
