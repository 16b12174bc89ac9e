import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { recordPermitWait } from '../metrics';
import { DocsApiFailureType, docsApiDetailsOf } from '../../contract/failure-types';
import {
  BudgetFailureType,
  budgetPermitGrantedSignal,
  budgetPermitQueuedSignal,
  MAX_PERMITS_PER_ASK,
  type BudgetKind,
  type BudgetRefusal,
  type PermitAsk,
  type PermitGrant,
} from '../../contract/budget';

/**
 * Asking is safe to repeat (the limiter ignores a repeated permit id): retried until it gets through. An ask that
 * the workflow waits for is a local activity (one marker). An ask ahead of need, for an export's stock, is an
 * activity: a local one would hold the workflow task that schedules the export's next run until it is done.
 */
const askOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
const { requestBudgetPermit } = proxyLocalActivities<Activities>(askOptions);
const { requestBudgetPermit: requestStockPermits } = proxyActivities<Activities>(askOptions);
/**
 * A give-back is an activity (it goes beside an export's merge) and bounded: a limiter that cannot be reached in
 * about a minute is given up with a warning, and the permit frees itself (the limiter's hold timeout, or its
 * window), so the workflow never waits on it.
 */
const { releaseBudgetPermits } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
  },
});

/**
 * A permit not granted after this long is asked for again (same permit id: a limiter that has it ignores the
 * repeat). A limiter terminated while the permit waited is then started again, so no wait lasts for ever.
 */
const REASK_AFTER_MS = 2 * 60_000;

type AskOnItsWay = { count: number; until: number | null; grant?: PermitGrant };

/**
 * A workflow's side of its project's budget: one ask (for up to `count` permits) to the budget's limiter workflow,
 * one grant signal back, one give-back. The wait is a workflow condition, not an activity: it can last hours and
 * counts against no attempt limit; it ends at `deadlineAt` (BudgetWaitTimedOut). An export spends its permits
 * through a stock (`take`), refilled ahead of its runs while the budget has room (visitors-export.md, "The page
 * window and the permits").
 */
export class BudgetPermits {
  /** Asks on their way (withdrawn by `giveBack`), with the limiter's estimate once it sent one, then its grant. */
  readonly #asks = new Map<string, AskOnItsWay>();
  /** Granted and not spent yet, oldest first, one entry per permit. */
  readonly #stock: PermitGrant[] = [];
  /** The stock's asks on their way, and the runs waiting for them. */
  #refilling = 0;
  #waiting = 0;
  /** A stock's ask failed (its deadline passed): every run waiting for the stock fails so. */
  #failure: Error | undefined;
  /** The limiter's latest room for this requester; undefined before the first grant and after a 429. */
  #spare: number | undefined;
  /** Permits the stock aims to hold: the next round of runs. */
  #aim = 1;

  constructor(
    private readonly kind: BudgetKind,
    private readonly of: { projectId: string; deadlineAt: number },
    private readonly onWaitChange: () => void = () => undefined,
  ) {
    setHandler(budgetPermitGrantedSignal, (grant) => {
      const ask = this.#asks.get(grant.permitId);
      if (ask !== undefined) ask.grant = grant;
    });
    setHandler(budgetPermitQueuedSignal, ({ permitId, estimatedGrantAt }) => {
      const ask = this.#asks.get(permitId);
      if (ask === undefined) return;
      ask.until = estimatedGrantAt;
      this.onWaitChange();
    });
  }

  /** The limiter's latest estimate among this workflow's waiting asks; null when none waits. */
  get waitingUntil(): number | null {
    const estimates = [...this.#asks.values()].flatMap(({ until }) => (until === null ? [] : [until]));
    return estimates.length === 0 ? null : Math.max(...estimates);
  }

  /** The ask: up to `count` permits (the first waits its turn, the others come from the spare). */
  ask(options: Partial<Pick<PermitAsk, 'count' | 'exclusive' | 'refusal'>> = {}): Promise<PermitGrant> {
    return this.#ask(options, requestBudgetPermit);
  }

  /**
   * `toStock`: the grant goes into the stock in the step that takes it off the asks on their way, so that a
   * give-back, whenever it runs, finds it in one or the other.
   */
  async #ask(
    options: Partial<Pick<PermitAsk, 'count' | 'exclusive' | 'refusal'>>,
    send: typeof requestBudgetPermit,
    toStock = false,
  ): Promise<PermitGrant> {
    const { workflowId, runId } = workflowInfo();
    const { projectId, deadlineAt } = this.of;
    const ask = {
      permitId: uuid4(),
      count: 1,
      ...options,
      projectId,
      requesterId: workflowId,
      requesterRunId: runId,
    };
    const { permitId } = ask;
    const asked: AskOnItsWay = { count: ask.count, until: null };
    const granted = () => asked.grant !== undefined;
    const askedAt = Date.now();
    this.#asks.set(permitId, asked);
    try {
      for (;;) {
        await send({ kind: this.kind, ask });
        const waitMs = Math.min(REASK_AFTER_MS, deadlineAt - Date.now());
        if (granted() || (waitMs > 0 && (await condition(granted, waitMs)))) break;
        if (Date.now() >= deadlineAt) throw this.timedOut();
      }
      const grant = asked.grant as PermitGrant;
      if (toStock) this.#stock.push(...Array.from({ length: grant.count }, () => ({ ...grant, count: 1 })));
    } catch (error) {
      // Cancelled while the permit waited: withdrawn, so that its grant never goes to a run that may have ended
      // by then, and an exclusive one does not hold the budget until its timeout.
      if (isCancellation(error)) await CancellationScope.nonCancellable(() => this.giveBack());
      throw error;
    } finally {
      this.#asks.delete(permitId);
      if (asked.until !== null) this.onWaitChange();
    }
    const grant = asked.grant as PermitGrant;
    this.#spare = grant.spare;
    recordPermitWait(this.kind, Date.now() - askedAt);
    return grant;
  }

  /** The failure of an ask that got no grant before its deadline. */
  timedOut(): ApplicationFailure {
    const { projectId, deadlineAt } = this.of;
    return ApplicationFailure.create({
      type: BudgetFailureType.waitTimedOut,
      nonRetryable: true,
      message: `no ${this.kind} budget for project ${projectId} before the deadline ${new Date(deadlineAt).toISOString()}`,
    });
  }

  /**
   * The give-back: this requester needs no more permits for now (an export's pages are done, it continues as new,
   * it was cancelled or failed). Its stock goes back to the budget, and so do its asks on their way, whole (one
   * still waiting is withdrawn: no grant goes to a run that has ended). Bounded, never this workflow's failure.
   */
  async giveBack(): Promise<void> {
    const unused = new Map([...this.#asks].map(([permitId, { count }]) => [permitId, count]));
    for (const { permitId } of this.#stock.splice(0)) unused.set(permitId, (unused.get(permitId) ?? 0) + 1);
    if (unused.size === 0) return;
    const releases = [...unused].map(([permitId, count]) => ({ permitId, unused: count }));
    try {
      await CancellationScope.nonCancellable(() =>
        releaseBudgetPermits({ kind: this.kind, projectId: this.of.projectId, releases }),
      );
    } catch (error) {
      log.warn('Permit release given up: the limiter frees it after its hold timeout or window', {
        kind: this.kind,
        projectId: this.of.projectId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Permits this requester may count on now: its stock and the room the limiter's latest grant left. */
  get room(): number {
    return this.#spare === undefined ? 0 : this.#spare + this.#stock.length;
  }

  /** Permits granted and not spent yet: a run takes this many without waiting. */
  get inStock(): number {
    this.#dropStale();
    return this.#stock.length;
  }

  /** The stock aims at `count` permits ahead of the runs (only while the budget has room for them). */
  aimAt(count: number): void {
    this.#aim = Math.max(1, Math.min(MAX_PERMITS_PER_ASK, count));
  }

  /**
   * Up to `count` permits for a run from the stock; an empty stock waits for its next grant. `refusal`: the
   * previous request was refused with 429 (the limiter pauses everyone; the stock, granted before the pause,
   * would land in it).
   */
  async take(count: number, refusal?: BudgetRefusal): Promise<PermitGrant[]> {
    if (refusal !== undefined) [this.#stock.length, this.#spare] = [0, undefined];
    for (;;) {
      this.#dropStale();
      if (this.#stock.length > 0) {
        const taken = this.#stock.splice(0, Math.max(1, count));
        this.#refill();
        return taken;
      }
      this.#waiting += 1;
      try {
        this.#refill(refusal);
        refusal = undefined;
        await condition(() => this.#stock.length > 0 || this.#refilling === 0);
      } finally {
        this.#waiting -= 1;
      }
      if (this.#failure !== undefined) throw this.#failure;
      // The permit a run waited for is spent by its first request as soon as the run's activity starts: it is
      // not held, so no spendBy (the window's padding covers that delay, as it covers any requester's).
      const [first] = this.#stock;
      if (first !== undefined) this.#stock[0] = { ...first, spendBy: Number.MAX_SAFE_INTEGER };
    }
  }

  /** Permits taken and not spent (no request was sent with them): the next runs take them first. */
  putBack(permits: readonly PermitGrant[]): void {
    this.#stock.unshift(...permits);
    this.#dropStale();
  }

  /**
   * Asks for the stock: for a run that waits (one permit while the budget binds; the first ask also asks for
   * the stock's round, so that where the budget has room the runs after the first page need not wait), or,
   * where the budget has room, for the next round when the stock runs below half of it. One ask at a time (a
   * refusal is reported at once), outside the asking run's cancellation scope: other runs wait for its grant.
   */
  #refill(refusal?: BudgetRefusal): void {
    if (this.#failure !== undefined || (this.#refilling > 0 && refusal === undefined)) return;
    let count = Math.max(1, this.#waiting + this.#aim - this.#stock.length);
    if (this.room < this.#aim) {
      if (this.#waiting === 0) return;
      count = this.#spare === undefined && refusal === undefined ? this.#aim : 1;
    } else if (this.#waiting === 0 && this.#stock.length >= this.#aim / 2) return;
    this.#refilling += 1;
    void CancellationScope.nonCancellable(() =>
      this.#ask(
        { count: Math.min(MAX_PERMITS_PER_ASK, count), ...(refusal === undefined ? {} : { refusal }) },
        this.#waiting > 0 ? requestBudgetPermit : requestStockPermits,
        true,
      ),
    )
      .catch((error: unknown) => {
        this.#failure = error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        this.#refilling -= 1;
      });
  }

  #dropStale(): void {
    const now = Date.now();
    while ((this.#stock[0]?.spendBy ?? Infinity) < now) this.#stock.shift();
  }
}

/** The refusal to report when an activity failed with the service's 429; undefined for any other failure. */
export function refusalOf(error: unknown, permit: Pick<PermitGrant, 'grantedAt'>): BudgetRefusal | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  if (cause.type !== DocsApiFailureType.rateLimited) return undefined;
  const retryAfterMs = docsApiDetailsOf(cause.details)?.retryAfterMs;
  return { grantedAt: permit.grantedAt, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/** "14:05:09 UTC": what an operator reads in the UI and in queries. */
export function clockTime(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(11, 19)} UTC`;
}
