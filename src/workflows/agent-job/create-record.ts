import type { AgentJobCreateRecord } from '../../contract/agent-job';

/**
 * The record of a job's create (workflow id `agentJobCreateRecord:<the job's workflow id>`): started as soon as
 * the create may have reached the service, it completes at once with the record as its result, which Temporal
 * keeps for the namespace's retention whatever happens to the job's own runs (terminated, reset, started again).
 */
export function agentJobCreateRecord(record: AgentJobCreateRecord): Promise<AgentJobCreateRecord> {
  return Promise.resolve(record);
}
