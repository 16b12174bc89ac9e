import type { RateBudget } from '../src/contract/budget';
import type { BudgetName, Simulator } from '../dev/simulator';
import { fnv1a, seededRandom } from '../dev/simulator/hash';

const TICK_MS = 250;

interface Account {
  name: BudgetName;
  projectId?: string;
  budget: RateBudget;
  /** Start of the window whose demand has been drawn. */
  windowStart: number;
  /** When this window's requests arrive (ms since the epoch), not yet sent. */
  arrivals: number[];
  /** Requests that arrived and were refused: sent again at every tick, whatever Retry-After said. */
  backlog: number;
}

/**
 * Another client of the same key (a dashboard, a sync job) that wants `share` of every window of every budget.
 * Its requests arrive at random moments of each window; a refused one is sent again every 250 ms, ignoring
 * Retry-After, so that it takes what the window has left the moment it opens. It spends through the simulator's
 * budget-spend control, so its requests are not in the request log: every 429 there is the worker's.
 */
export class ForeignSpender {
  readonly #accounts: Account[];
  readonly #random = seededRandom(fnv1a('chaos-foreign-spender'));
  #timer: NodeJS.Timeout | undefined;
  /** Requests the service took from this spender, per budget. */
  readonly spent: Record<BudgetName, number> = { analytics: 0, agent: 0 };
  /** Requests it sent that were refused (each retry counted). */
  readonly refused: Record<BudgetName, number> = { analytics: 0, agent: 0 };

  constructor(
    private readonly sim: Simulator,
    budgets: Record<BudgetName, RateBudget>,
    private readonly share: number,
    agentProjects: string[],
  ) {
    const account = (name: BudgetName, projectId?: string): Account => ({
      name,
      ...(projectId === undefined ? {} : { projectId }),
      budget: budgets[name],
      windowStart: -1,
      arrivals: [],
      backlog: 0,
    });
    this.#accounts = [account('analytics'), ...agentProjects.map((p) => account('agent', p))];
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#tick(Date.now()), TICK_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(now: number): void {
    for (const account of this.#accounts) {
      const { windowMs, requests } = account.budget;
      const windowStart = now - (now % windowMs);
      if (windowStart !== account.windowStart) {
        account.windowStart = windowStart;
        const wanted = Math.round(this.share * requests);
        account.arrivals.push(
          ...Array.from({ length: wanted }, () => windowStart + Math.floor(this.#random() * windowMs)),
        );
        // A client that never waits does not pile up more than a window's worth either.
        account.backlog = Math.min(account.backlog, wanted);
      }
      const due = account.arrivals.filter((at) => at <= now).length;
      account.arrivals = account.arrivals.filter((at) => at > now);
      const sending = account.backlog + due;
      if (sending === 0) continue;
      const taken = this.sim.spendBudget(account.name, sending, account.projectId);
      this.spent[account.name] += taken;
      this.refused[account.name] += sending - taken;
      account.backlog = sending - taken;
    }
  }
}
