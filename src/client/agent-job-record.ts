import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { AgentJobCreateRecord } from '../contract/agent-job';
import { WorkflowType, agentJobCreateRecordId } from '../contract/names';
import type { AgentJobCreateRecordWorkflow } from '../contract/workflow-types';

/**
 * The job the agentJob workflow `workflowId` created, from its create record; undefined when no create of it was
 * ever answered. Read by the create activity (a create replayed by a reset is answered from it), by
 * followUpAnyState and by `job status` (a run terminated while its create was in flight).
 */
export async function readCreateRecord(
  client: Client,
  workflowId: string,
): Promise<AgentJobCreateRecord | undefined> {
  const handle = client.workflow.getHandle<AgentJobCreateRecordWorkflow>(agentJobCreateRecordId(workflowId));
  try {
    return await handle.result();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}

/** Records the create's answer (the first record of a workflow id stays: a repeat is a no-op). */
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
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: `Job ${record.jobId} created by ${record.workflowId}`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
