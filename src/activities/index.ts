import { Context } from '@temporalio/activity';
import { earlierFollowUpsOf } from '../client/agent-job';
import { readCreateRecord, unendedCreateOf, writeCreateRecord } from '../client/agent-job-runs';
import { createAgentJobActivities, type AgentJobActivityDeps, type CreateRecords } from './agent-job';
import { createBudgetActivities, type BudgetActivityDeps } from './budget';
import { createInputCheckActivities } from './input-check';
import { createNightlyActivities } from './nightly';
import { createVisitorsExportActivities, type VisitorsExportActivityDeps } from './visitors-export';

export type ActivityDeps = AgentJobActivityDeps & VisitorsExportActivityDeps & BudgetActivityDeps;

/** Every activity the worker registers, built from explicit dependencies (real parts or test fakes). */
export function createActivities(deps: ActivityDeps) {
  const budget = createBudgetActivities(deps);
  return {
    ...createAgentJobActivities({
      releasePermit: budget.releaseBudgetPermits,
      createRecords: temporalCreateRecords,
      ...deps,
    }),
    ...createVisitorsExportActivities(deps),
    ...budget,
    ...createInputCheckActivities(),
    ...createNightlyActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Create records as Temporal workflows (client/agent-job-record.ts), through the activity's client. */
const temporalCreateRecords: CreateRecords = {
  read: (workflowId) => readCreateRecord(Context.current().client, workflowId),
  write: (record) => writeCreateRecord(Context.current().client, record, Context.current().info.taskQueue),
  earlierFollowUps: (workflowId, runId) => earlierFollowUpsOf(Context.current().client, workflowId, runId),
  unendedCreate: (workflowId, runId) => unendedCreateOf(Context.current().client, workflowId, runId),
};
