import { CancellationScope, condition, sleep, uuid4 } from '@temporalio/workflow';
import { MAX_PERMITS_PER_ASK, type BudgetRefusal, type PermitGrant } from '../../contract/budget';
import type { BudgetPermits } from './permits';

/** How long the return of unspent permits waits for an ask still on its way. */
const RELEASE_WAIT = '5 seconds';
/**
 * The least time a batch's permits may be held for the stock to be worth keeping: a round of runs spends them
 * over about a second. A short window's padding (1 s for 10 s) makes every permit its own ask.
 */
const MIN_HOLD_MS = 1_000;

/**
 * An export's permits. While the limiter's latest grant leaves room for what the export takes next (`aimAt`),
 * one ask in the background ("up to n permits") keeps a stock of about one round of page runs: a run takes its
 * permits at once, and the next round's are asked for while it runs. When the budget binds (no room, or not known
 * yet), each run of one page asks for its own permit: one ask per request, FIFO per project, round robin across
 * projects.
 *
 * A permit not spent by its grant's `spendBy` is dropped: the window's padding covers the delay between a grant
 * and its request only that long. Permits left when the export stops go back to the budget (`release`).
 */
export class PagePermits {
  /** Granted and not spent yet, oldest first. */
  readonly #stock: PermitGrant[] = [];
  #asking = false;
  /** The background ask's permit id while it waits: withdrawn if the export stops first. */
  #askId: string | undefined;
  #waiting = 0;
  /** The background ask failed: every run waiting for it fails so. */
  #failure: Error | undefined;
  /** The limiter's latest room for this export; undefined before the first grant and after a 429. */
  #spare: number | undefined;
  /** One timer for every background ask (a timer per ask would cost two events each). */
  #deadlineTimer: Promise<void> | undefined;
  #deadlinePassed = false;
  /** Permits the stock aims to hold: the next round of runs. */
  #aim = 1;
  /** How long after its grant a batch's permit may be spent (the limiter's padding), from the latest grant. */
  #holdMs = 0;

  constructor(
    private readonly permits: BudgetPermits,
    private readonly projectId: string,
    private readonly deadlineAt: number,
  ) {}

  /**
   * Permits this export may count on now: its stock and the room the limiter's latest grant left; 0 before the
   * first grant, after a 429, or when permits may not be held long enough to be worth keeping.
   */
  get room(): number {
    if (this.#spare === undefined || this.#holdMs < MIN_HOLD_MS) return 0;
    return this.#spare + this.#stock.length;
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
   * Up to `count` permits for a run: the first waits its turn if it must, the others come from the stock without
   * waiting. `refusal`: the previous request was refused with 429 (the limiter pauses everyone).
   */
  async take(count: number, refusal?: BudgetRefusal): Promise<PermitGrant[]> {
    if (refusal !== undefined) {
      // Permits granted before the pause would land in it: drop them and ask as under a binding budget.
      this.#stock.length = 0;
      this.#spare = undefined;
      return [await this.#single(refusal)];
    }
    for (;;) {
      this.#dropStale();
      if (this.#stock.length > 0) {
        const taken = this.#stock.splice(0, Math.max(1, count));
        this.#topUp();
        return taken;
      }
      if (!this.#open) return [await this.#single()];
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

  /** Permits taken and not spent (no request was sent with them): the next runs take them first. */
  putBack(permits: readonly PermitGrant[]): void {
    this.#stock.unshift(...permits);
    this.#dropStale();
  }

  /**
   * The export needs no more permits for now (its pages are done, it continues as new, or it was cancelled or
   * failed): those in the stock go back to the budget for others, with those of an ask on its way if it is
   * granted within a few seconds; an ask not granted by then is withdrawn, so that no grant goes to an export
   * that has ended. Not cancellable: a cancelled export gives its permits back too.
   */
  release(): Promise<void> {
    return CancellationScope.nonCancellable(async () => {
      await condition(() => !this.#asking, RELEASE_WAIT);
      const grants = new Map<number, number>();
      for (const permit of this.#stock.splice(0)) {
        grants.set(permit.grantedAt, (grants.get(permit.grantedAt) ?? 0) + 1);
      }
      await this.permits.release(this.projectId, {
        ...(this.#askId === undefined ? {} : { permitId: this.#askId }),
        unspent: [...grants].map(([grantedAt, count]) => ({ grantedAt, count })),
      });
    });
  }

  /** The budget has room for the stock's next round. */
  get #open(): boolean {
    return this.room >= this.#aim;
  }

  async #single(refusal?: BudgetRefusal): Promise<PermitGrant> {
    // The export's first ask also asks for the stock's round: where the budget has room, the runs after the
    // first page need not wait for another ask.
    const first = this.#spare === undefined && refusal === undefined && this.#holdMs === 0;
    const grant = await this.permits.acquire({
      projectId: this.projectId,
      deadlineAt: this.deadlineAt,
      count: first ? this.#aim : 1,
      ...(refusal === undefined ? {} : { refusal }),
    });
    this.#spare = grant.spare;
    this.#holdMs = (grant.spendBy ?? grant.grantedAt) - grant.grantedAt;
    const extras = (grant.count ?? 1) - 1;
    if (extras > 0 && this.#holdMs >= MIN_HOLD_MS) {
      for (let i = 0; i < extras; i++) this.#stock.push({ ...grant, count: 1 });
    } else if (extras > 0) {
      // Too short a hold to keep them: their places in the window are free again at once.
      await this.permits.release(this.projectId, {
        unspent: [{ grantedAt: grant.grantedAt, count: extras }],
      });
    }
    // The permit a run waited for is spent by its first request as soon as the run's activity starts: it is
    // not held, so no spendBy (the window's padding covers that delay, as it covers any requester's).
    const { spendBy: _held, ...permit } = grant;
    return permit;
  }

  /**
   * Asks for the next round when the stock runs below half of it (or a run waits), at most MAX_PERMITS_PER_ASK.
   * One ask at a time, through a regular activity (a local one would hold the workflow task, and every run's
   * completion behind it, while the ask is sent). It runs outside the asking run's cancellation scope: other runs
   * wait for its grant.
   */
  #topUp(): void {
    if (this.#asking || this.#failure !== undefined || !this.#open) return;
    if (this.#waiting === 0 && this.#stock.length >= this.#aim / 2) return;
    const count = Math.min(MAX_PERMITS_PER_ASK, Math.max(1, this.#waiting + this.#aim - this.#stock.length));
    this.#asking = true;
    const permitId = uuid4();
    this.#askId = permitId;
    this.#startDeadlineTimer();
    void CancellationScope.nonCancellable(() =>
      this.permits.acquire({
        projectId: this.projectId,
        deadlineAt: this.deadlineAt,
        count,
        background: true,
        deadlinePassed: () => this.#deadlinePassed,
        permitId,
      }),
    )
      .then(
        (grant) => {
          this.#spare = grant.spare;
          this.#holdMs = (grant.spendBy ?? grant.grantedAt) - grant.grantedAt;
          for (let i = 0; i < (grant.count ?? 1); i++) this.#stock.push({ ...grant, count: 1 });
        },
        (error: unknown) => {
          this.#failure = error instanceof Error ? error : new Error(String(error));
        },
      )
      .finally(() => {
        this.#asking = false;
        this.#askId = undefined;
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
    while ((this.#stock[0]?.spendBy ?? Infinity) < now) this.#stock.shift();
  }
}
