import { createAgentJobActivities, type AgentJobActivityDeps } from './agent-jobs';

export type ActivityDeps = AgentJobActivityDeps;

/** Every activity the worker registers, built from explicit dependencies (real parts or test fakes). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createAgentJobActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
