import type { BudgetChanges, BudgetName, BudgetSpec, BudgetsConfig } from './types';

export type BudgetAnswer = { ok: true } | { ok: false; retryAfterSeconds: number | undefined };

/**
 * The service's budgets: N requests per fixed window (aligned on multiples of the window since the epoch).
 * `analytics` is one budget per key (the organization), shared by every analytics route and project;
 * `agent` is one budget per project, shared by create and message. A refused request does not count.
 */
export class Budgets {
  #specs: BudgetsConfig;
  #windows = new Map<string, { start: number; used: number }>();

  constructor(
    specs: BudgetsConfig,
    private readonly clock: () => number,
  ) {
    this.#specs = { ...specs };
  }

  get config(): BudgetsConfig {
    return { ...this.#specs };
  }

  /** Replaces the given budgets (null turns one off); the windows start afresh. */
  configure(changes: BudgetChanges): BudgetsConfig {
    for (const name of ['analytics', 'agent'] as const) {
      const change = changes[name];
      if (change === null) delete this.#specs[name];
      else if (change !== undefined) this.#specs[name] = change;
    }
    this.#windows.clear();
    return this.config;
  }

  admit(name: BudgetName, key: string): BudgetAnswer {
    const spec = this.#specs[name];
    if (!spec) return { ok: true };
    const window = this.#window(name, key, spec);
    if (window.used < spec.requests) {
      window.used += 1;
      return { ok: true };
    }
    const seconds = Math.max(1, Math.ceil((window.start + spec.windowMs - this.clock()) / 1000));
    return { ok: false, retryAfterSeconds: spec.retryAfter === false ? undefined : seconds };
  }

  /** Someone else with the same key (a dashboard, a sync) spends `requests` of the current window. */
  spend(name: BudgetName, key: string, requests: number): number {
    const spec = this.#specs[name];
    if (!spec) return 0;
    const window = this.#window(name, key, spec);
    const spent = Math.min(requests, spec.requests - window.used);
    window.used += spent;
    return spent;
  }

  clear(): void {
    this.#windows.clear();
  }

  #window(name: BudgetName, key: string, spec: BudgetSpec): { start: number; used: number } {
    const now = this.clock();
    const start = now - (now % spec.windowMs);
    const id = `${name}\u0000${key}`;
    let window = this.#windows.get(id);
    if (!window || window.start !== start) {
      window = { start, used: 0 };
      this.#windows.set(id, window);
    }
    return window;
  }
}

/** The analytics budget belongs to the key's organization; the simulator serves one key, so one organization. */
export const ORGANIZATION = 'organization';
