import { createHash } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { AgentJobCreateRecord } from '../contract/agent-job';
import { CREATE_RECORD_ID_PREFIX, DocsProjectIdKey, quoteVisibility, WorkflowType } from '../contract/names';
import type { AgentJobCreateRecordWorkflow } from '../contract/workflow-types';
import { serviceCallsOf } from './agent-job-reset';

/**
 * The id of the record of the job that the agentJob workflow `workflowId` created: the same shape for every id.
 * Written by the create activity as soon as the service answered, it outlives the job's runs: a run terminated
 * mid-create, reset to before its create, or started again under the same id finds the job there.
 */
export function agentJobCreateRecordId(workflowId: string): string {
  return CREATE_RECORD_ID_PREFIX + createHash('sha256').update(workflowId).digest('hex');
}

/**
 * The create that the agentJob workflow `workflowId` sent, from its create record; undefined when it never sent
 * one. Read by the create activity (a run reset to before its create, or started again under the same id, is
 * answered from it), by followUpAnyState and by `job status` (a run terminated while its create was in flight).
 */
export async function readCreateRecord(
  client: Client,
  workflowId: string,
): Promise<AgentJobCreateRecord | undefined> {
  const handle = client.workflow.getHandle<AgentJobCreateRecordWorkflow>(agentJobCreateRecordId(workflowId));
  try {
    return await handle.result();
  } catch (error) {
    // A record always completes: a failed run under its id (an agentJob refused for the reserved id) is none.
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowFailedError) return undefined;
    throw error;
  }
}

/** Records a create (the first record of a workflow id stays: a repeat is a no-op; a failed run is replaced). */
export async function writeCreateRecord(
  client: Client,
  record: AgentJobCreateRecord,
  taskQueue: string,
): Promise<void> {
  try {
    await client.workflow.start<AgentJobCreateRecordWorkflow>(WorkflowType.agentJobCreateRecord, {
      workflowId: agentJobCreateRecordId(record.workflowId),
      taskQueue,
      args: [record],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      staticSummary:
        record.jobId === undefined
          ? `A create of unknown outcome, sent by ${record.workflowId}`
          : `Job ${record.jobId} created by ${record.workflowId}`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** An earlier run's create that did not run to its end, so it recorded nothing, though it may have created a job. */
export interface UnendedCreate {
  runId: string;
  projectId: string | undefined;
}

/**
 * The create an earlier run of the agentJob workflow `workflowId` sent without running to its end (its worker
 * died, then the run was terminated or the create timed out), from the runs' histories as reset safety reads
 * them; undefined when there is none. Read only when the id has no create record.
 */
export async function unendedCreateOf(
  client: Client,
  workflowId: string,
  exceptRunId: string,
): Promise<UnendedCreate | undefined> {
  const query = `WorkflowId = ${quoteVisibility(workflowId)} AND WorkflowType = ${quoteVisibility(WorkflowType.agentJob)}`;
  for await (const run of client.workflow.list({ query })) {
    if (run.runId === exceptRunId) continue;
    const { events } = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const calls = serviceCallsOf(events ?? []);
    if (calls.some((call) => call.type === 'createAgentJob' && !call.ranToEnd)) {
      return { runId: run.runId, projectId: run.typedSearchAttributes.get(DocsProjectIdKey) };
    }
  }
  return undefined;
}
