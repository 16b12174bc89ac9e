import { CancellationScope, condition, sleep } from '@temporalio/workflow';
import { MAX_PERMITS_PER_ASK, type BudgetRefusal } from '../../contract/budget';
import type { PermitGrant } from '../../contract/budget';
import type { BudgetPermits } from '../budget/permits';

/** How long the return of unspent permits waits for an ask still on its way. */
const GIVE_BACK_WAIT = '5 seconds';

/** The least spare that opens the window: a small budget (the service's 100 an hour) never wastes a request. */
const MIN_OPEN_SPARE = 64;

/**
 * An export's permits, off the pages' critical path while the budget has room. When the limiter reports enough
 * to spare for this export (see `open`), one ask in the background ("up to k permits") keeps a stock
 * of a few windows' worth: a page takes one at once, and the next batch is asked for while pages run. When the
 * budget binds (spare below that, or not known yet), each page asks for its own permit: one ask per request,
 * FIFO per project, round robin across projects, as the limiter always did.
 *
 * A permit not spent by its grant's `spendBy` is dropped: the window's padding covers the delay between a grant
 * and its request only that long. Permits left when the export ends are not spent: the limiter counted them, so
 * the budget is never exceeded; they stay unused until they leave the window.
 */
export class PagePermits {
  /** Granted and not spent yet, oldest first. */
  readonly #stock: PermitGrant[] = [];
  #asking = false;
  #waiting = 0;
  /** The background ask failed: every page waiting for it fails so. */
  #failure: Error | undefined;
  /** The limiter's latest spare for this export; undefined before the first grant and after a 429. */
  #spare: number | undefined;
  /** One timer for every background ask (a timer per ask would cost two events each). */
  #deadlineTimer: Promise<void> | undefined;
  #deadlinePassed = false;
  /**
   * How many permits one ask aims for: half as many again after a batch spent without a stale permit, doubled
   * when a page found the stock empty, halved when permits went stale; so a batch lasts about as long as a
   * permit may be held (fast pages take more, slow ones fewer) and few asks are made.
   */
  #batch: number;
  /** The batch grew since the last grant: it grows once per grant, however many pages wait. */
  #grown = false;
  /** Batches granted so far. */
  #granted = 0;
  /** A permit went stale since the last grant. */
  #dropped = false;

  constructor(
    private readonly permits: BudgetPermits,
    private readonly projectId: string,
    private readonly deadlineAt: number,
    private readonly concurrency: number,
  ) {
    this.#batch = Math.max(4, 2 * concurrency);
  }

  /**
   * The budget does not bind: its spare for this export covers many windows (the stock takes up to eight, and
   * up to `concurrency - 1` requests may land past the end), so pages may go `concurrency` ahead of a full one.
   */
  get open(): boolean {
    return this.#spare !== undefined && this.#spare >= Math.max(MIN_OPEN_SPARE, 16 * this.concurrency);
  }

  /** A permit for one request; `refusal`: the previous one was refused with 429 (everyone pauses). */
  async take(refusal?: BudgetRefusal): Promise<PermitGrant> {
    if (refusal !== undefined) {
      // Permits granted before the pause would land in it: drop them and ask as under a binding budget.
      this.#stock.length = 0;
      this.#spare = undefined;
      return this.#single(refusal);
    }
    for (;;) {
      this.#dropStale();
      const permit = this.#stock.shift();
      if (permit !== undefined) {
        this.#topUp();
        return permit;
      }
      if (!this.open) return this.#single();
      // The first batch is awaited by design: only later ones asked too late.
      if (!this.#grown && this.#granted > 0) this.#batch = Math.min(MAX_PERMITS_PER_ASK, 2 * this.#batch);
      this.#grown = true;
      this.#waiting += 1;
      try {
        this.#topUp();
        await condition(() => this.#stock.length > 0 || !this.#asking || this.#deadlinePassed);
      } finally {
        this.#waiting -= 1;
      }
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#stock.length === 0 && this.#deadlinePassed)
        throw this.permits.timedOut({ projectId: this.projectId, deadlineAt: this.deadlineAt });
    }
  }

  /**
   * Permits for a block of up to `count` requests: the first as `take` gives it (waiting if it must), the rest
   * from the stock without waiting. The next ask, made at once while this block runs, aims at `nextCount`.
   */
  async takeUpTo(count: number, nextCount = count): Promise<PermitGrant[]> {
    // An ask made now (the stock is empty) is for the whole block.
    this.#batch = Math.max(this.#batch, Math.min(MAX_PERMITS_PER_ASK, count));
    const taken = [await this.take()];
    this.#dropStale();
    while (taken.length < count && this.#stock.length > 0) taken.push(...this.#stock.splice(0, 1));
    this.#batch = Math.max(4, Math.min(MAX_PERMITS_PER_ASK, nextCount));
    this.#topUp();
    return taken;
  }

  /**
   * The export needs no more permits for now (its pages are done, or it continues as new): those in the stock go
   * back to the budget for others, with those of an ask on its way if it is granted within a few seconds (it runs
   * beside the merge). A grant later than that, delivered to an export that has ended, the limiter frees itself.
   */
  async release(): Promise<void> {
    await condition(() => !this.#asking, GIVE_BACK_WAIT);
    const grants = new Map<number, number>();
    for (const permit of this.#stock.splice(0)) {
      grants.set(permit.grantedAt, (grants.get(permit.grantedAt) ?? 0) + 1);
    }
    await this.permits.release(this.projectId, {
      unspent: [...grants].map(([grantedAt, count]) => ({ grantedAt, count })),
    });
  }

  /** Permits taken and not spent (no request was sent with them): the next pages take them first. */
  putBack(permits: readonly PermitGrant[]): void {
    this.#stock.unshift(...permits);
    this.#dropStale();
  }

  async #single(refusal?: BudgetRefusal): Promise<PermitGrant> {
    const grant = await this.permits.acquire({
      projectId: this.projectId,
      deadlineAt: this.deadlineAt,
      count: 1,
      ...(refusal === undefined ? {} : { refusal }),
    });
    this.#spare = grant.spare;
    return grant;
  }

  /**
   * Asks for the next batch when the stock runs below half a batch (or a page waits): a batch and the pages
   * waiting, at most MAX_PERMITS_PER_ASK. One ask at a time, through a regular activity
   * (a local one would hold the workflow task, and every page completion behind it, while the ask is sent). It
   * runs outside the asking page's cancellation scope: other pages wait for its grant.
   */
  #topUp(): void {
    if (this.#asking || this.#failure !== undefined || !this.open) return;
    if (this.#waiting === 0 && this.#stock.length >= this.#batch / 2) return;
    const count = Math.min(MAX_PERMITS_PER_ASK, this.#waiting + this.#batch - this.#stock.length);
    this.#asking = true;
    this.#startDeadlineTimer();
    void CancellationScope.nonCancellable(() =>
      this.permits.acquire({
        projectId: this.projectId,
        deadlineAt: this.deadlineAt,
        count,
        background: true,
        deadlinePassed: () => this.#deadlinePassed,
      }),
    )
      .then(
        (grant) => {
          this.#spare = grant.spare;
          if (!this.#dropped && !this.#grown) {
            this.#batch = Math.min(MAX_PERMITS_PER_ASK, Math.ceil(this.#batch * 1.5));
          }
          this.#grown = false;
          this.#dropped = false;
          this.#granted += 1;
          for (let i = 0; i < (grant.count ?? 1); i++) this.#stock.push({ ...grant, count: 1 });
        },
        (error: unknown) => {
          this.#failure = error instanceof Error ? error : new Error(String(error));
        },
      )
      .finally(() => {
        this.#asking = false;
      });
  }

  #startDeadlineTimer(): void {
    if (this.#deadlineTimer !== undefined || !Number.isFinite(this.deadlineAt)) return;
    this.#deadlineTimer = CancellationScope.nonCancellable(() =>
      sleep(Math.max(1, this.deadlineAt - Date.now())),
    ).then(() => {
      this.#deadlinePassed = true;
    });
  }

  #dropStale(): void {
    const now = Date.now();
    const before = this.#stock.length;
    while ((this.#stock[0]?.spendBy ?? Infinity) < now) this.#stock.shift();
    if (this.#stock.length === before) return;
    this.#batch = Math.max(4, Math.floor(this.#batch / 2));
    this.#dropped = true;
  }
}
