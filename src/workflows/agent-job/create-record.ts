import type { AgentJobCreateRecord } from '../../contract/agent-job';

/**
 * The record of a job's create (workflow id `agent-job-created/<projectId>/<key>`): started by the create
 * activity as soon as the service answered, it completes at once with the record as its result, which Temporal
 * keeps for the namespace's retention whatever happens to the job's own runs (terminated, reset).
 */
export function agentJobCreateRecord(record: AgentJobCreateRecord): Promise<AgentJobCreateRecord> {
  return Promise.resolve(record);
}
