import { createAgentJobActivities, type AgentJobActivityDeps } from './agent-job';
import { createInputCheckActivities } from './check-input';
import { createVisitorsExportActivities, type VisitorsExportActivityDeps } from './visitors-export';

export type ActivityDeps = AgentJobActivityDeps & VisitorsExportActivityDeps;

/** Every activity the worker registers, built from explicit dependencies (real parts or test fakes). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createAgentJobActivities(deps),
    ...createVisitorsExportActivities(deps),
    ...createInputCheckActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
