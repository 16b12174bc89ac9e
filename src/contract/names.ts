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
 * Starts the id of every create record: reserved, so an agentJob refuses to run under such an id (no job's
 * workflow id can then be another job's record id).
 */
export const CREATE_RECORD_ID_PREFIX = `${WorkflowType.agentJobCreateRecord}:`;

/** Temporal's default limit on a workflow id (`limit.maxIDLength`): a job's record id must fit in it too. */
export const MAX_WORKFLOW_ID_BYTES = 1000;

/**
 * The record of the job that the agentJob workflow `agentJobWorkflowId` created, whatever the id's shape:
 * `agentJobCreateRecord:<workflow id>`. Injective, never the job's own id, never an id of another workflow type.
 * Written by the create activity as soon as the service answered, it outlives the runs of the job's workflow:
 * a run terminated mid-create, reset to before its create, or started again under the same id finds the job
 * there and never creates a second.
 */
export function agentJobCreateRecordId(agentJobWorkflowId: string): string {
  return CREATE_RECORD_ID_PREFIX + agentJobWorkflowId;
}

/** Why an agentJob may not run under this workflow id, or undefined when it may. */
export function agentJobWorkflowIdIssue(workflowId: string): string | undefined {
  if (workflowId.startsWith(CREATE_RECORD_ID_PREFIX))
    return `must not start with "${CREATE_RECORD_ID_PREFIX}" (reserved for the records of creates)`;
  const max = MAX_WORKFLOW_ID_BYTES - CREATE_RECORD_ID_PREFIX.length;
  if (new TextEncoder().encode(workflowId).length > max)
    return `must be at most ${max} bytes in UTF-8 (its create record's id adds "${CREATE_RECORD_ID_PREFIX}")`;
  return undefined;
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
