import { withBehaviour, type ResolvedBehaviour } from './jobs';
import { parseProjectConfig } from './schemas';
import type { ErrorBodies, ProjectConfig } from './types';

export interface ProjectView {
  projectId: string;
  jobs: ResolvedBehaviour;
  visitorPaths: number;
  errorBodies: ErrorBodies;
}

interface ProjectDefaults {
  jobs: ResolvedBehaviour;
  visitorPaths: number;
  errorBodies: ErrorBodies;
}

/** Per-project job behaviour, data-set size and error bodies, over the simulator-wide defaults. */
export class Projects {
  #configs = new Map<string, ProjectConfig>();

  constructor(private readonly defaults: ProjectDefaults) {}

  /** Validates (throws a TypeError naming the field) and merges into what was configured before. */
  configure(projectId: string, cfg: ProjectConfig): ProjectView {
    const parsed = parseProjectConfig(cfg);
    const current = this.#configs.get(projectId) ?? {};
    const merged: ProjectConfig = { ...current };
    if (parsed.jobs !== undefined) merged.jobs = { ...current.jobs, ...parsed.jobs };
    if (parsed.visitorPaths !== undefined) merged.visitorPaths = parsed.visitorPaths;
    if (parsed.removedRows !== undefined) merged.removedRows = parsed.removedRows;
    if (parsed.errorBodies !== undefined) merged.errorBodies = parsed.errorBodies;
    this.#configs.set(projectId, merged);
    return this.view(projectId);
  }

  behaviour(projectId: string): ResolvedBehaviour {
    return withBehaviour(this.defaults.jobs, this.#configs.get(projectId)?.jobs);
  }

  visitorPaths(projectId: string): number {
    return this.#configs.get(projectId)?.visitorPaths ?? this.defaults.visitorPaths;
  }

  removedRows(projectId: string): number {
    return this.#configs.get(projectId)?.removedRows ?? 0;
  }

  errorBodies(projectId: string): ErrorBodies {
    return this.#configs.get(projectId)?.errorBodies ?? this.defaults.errorBodies;
  }

  view(projectId: string): ProjectView {
    return {
      projectId,
      jobs: this.behaviour(projectId),
      visitorPaths: this.visitorPaths(projectId),
      errorBodies: this.errorBodies(projectId),
    };
  }

  clear(): void {
    this.#configs = new Map();
  }
}
