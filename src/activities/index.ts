import { createAgentJobActivities, type AgentJobActivityDeps } from './agent-job';
import { createBudgetActivities, type BudgetActivityDeps } from './budget';
import { createInputCheckActivities } from './input-check';
import { createNightlyActivities } from './nightly';
import { createVisitorsExportActivities, type VisitorsExportActivityDeps } from './visitors-export';

export type ActivityDeps = AgentJobActivityDeps & VisitorsExportActivityDeps & BudgetActivityDeps;

/** Every activity the worker registers, built from explicit dependencies (real parts or test fakes). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createAgentJobActivities(deps),
    ...createVisitorsExportActivities(deps),
    ...createBudgetActivities(deps),
    ...createInputCheckActivities(),
    ...createNightlyActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
