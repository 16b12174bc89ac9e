import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { AgentJobCreateRecord } from '../contract/agent-job';
import { WorkflowType, agentJobCreateRecordId } from '../contract/names';
import type { AgentJobCreateRecordWorkflow, AgentJobWorkflow } from '../contract/workflow-types';
import { agentJobFailureOf } from './agent-job-failures';

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

/** How long the create activity waits for the earlier runs' end when it names their job in a refusal. */
const EARLIER_RESULT_WAIT_MS = 5000;

/**
 * The job's status and PR as the runs that created it ended (following continue-as-new from the creating run),
 * or undefined when they did not end with the job's data (terminated, cancelled, or not closed in 5 s).
 */
export async function readCreatedJobEnd(
  client: Client,
  record: AgentJobCreateRecord,
): Promise<{ status: string; prLink: string | null } | undefined> {
  const handle = client.workflow.getHandle<AgentJobWorkflow>(record.workflowId, record.runId);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), EARLIER_RESULT_WAIT_MS);
  });
  const ended = handle.result().then(
    (result) => ({ status: result.status, prLink: result.prLink }),
    (error: unknown) => {
      const failure = agentJobFailureOf(error);
      return failure?.status === undefined
        ? undefined
        : { status: failure.status, prLink: failure.prLink ?? null };
    },
  );
  try {
    return await Promise.race([ended, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
