import type { BudgetName, RouteName, SimulatorStats } from './types';

/** What the service received and did, for tests that prove no duplicate and no loss. */
export class Counters {
  #stats = empty();

  request(route: RouteName): void {
    this.#stats.requests[route] += 1;
  }

  jobCreated(projectId: string): void {
    this.#stats.jobsCreated += 1;
    this.#stats.jobsCreatedByProject[projectId] = (this.#stats.jobsCreatedByProject[projectId] ?? 0) + 1;
  }

  messageAccepted(): void {
    this.#stats.messagesAccepted += 1;
  }

  budgetRefused(name: BudgetName): void {
    this.#stats.budgetRefusals[name] += 1;
  }

  response(status: number | 'reset' | 'hang'): void {
    const key = String(status);
    this.#stats.responsesByStatus[key] = (this.#stats.responsesByStatus[key] ?? 0) + 1;
  }

  snapshot(): SimulatorStats {
    return structuredClone(this.#stats);
  }

  clear(): void {
    this.#stats = empty();
  }
}

function empty(): SimulatorStats {
  return {
    requests: { createJob: 0, getJob: 0, sendMessage: 0, getVisitors: 0 },
    jobsCreated: 0,
    jobsCreatedByProject: {},
    messagesAccepted: 0,
    budgetRefusals: { analytics: 0, agent: 0 },
    responsesByStatus: {},
  };
}
