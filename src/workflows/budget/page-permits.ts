import { CancellationScope, condition, uuid4 } from '@temporalio/workflow';
import { MAX_PERMITS_PER_ASK, type BudgetRefusal, type PermitGrant } from '../../contract/budget';
import type { BudgetPermits } from './permits';

/**
 * An export's permits. While the limiter's latest grant leaves room for what the export takes next (`aimAt`),
 * one ask at a time ("up to n permits") keeps a stock of about one round of page runs: a run takes its permits
 * at once, and the next round's are asked for while it runs. When the budget binds (no room, or not known yet),
 * each run of one page asks for its own permit: FIFO per project, round robin across projects.
 *
 * A permit not spent by its grant's `spendBy` is dropped: the window's padding covers the delay between a grant
 * and its request only that long. Permits left when the export stops go back to the budget (`release`).
 */
export class PagePermits {
  /** Granted and not spent yet, oldest first, one entry per permit. */
  readonly #stock: PermitGrant[] = [];
  /** The stock's ask while it waits: withdrawn if the export stops first. */
  #asking: { permitId: string; count: number } | undefined;
  #waiting = 0;
  /** The stock's ask failed (its deadline passed): every run waiting for it fails so. */
  #failure: Error | undefined;
  /** The limiter's latest room for this export; undefined before the first grant and after a 429. */
  #spare: number | undefined;
  /** Permits the stock aims to hold: the next round of runs. */
  #aim = 1;

  constructor(
    private readonly permits: BudgetPermits,
    private readonly projectId: string,
    private readonly deadlineAt: number,
  ) {}

  /** Permits this export may count on now: its stock and the room the limiter's latest grant left. */
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
   * Up to `count` permits for a run: the first waits its turn if it must, the others come from the stock without
   * waiting. `refusal`: the previous request was refused with 429 (the limiter pauses everyone).
   */
  async take(count: number, refusal?: BudgetRefusal): Promise<PermitGrant[]> {
    if (refusal !== undefined) {
      // Permits granted before the pause would land in it: drop them and ask as under a binding budget.
      this.#stock.length = 0;
      this.#spare = undefined;
      return [await this.#single(1, refusal)];
    }
    for (;;) {
      this.#dropStale();
      if (this.#stock.length > 0) {
        const taken = this.#stock.splice(0, Math.max(1, count));
        this.#topUp();
        return taken;
      }
      // The export's first ask also asks for the stock's round: where the budget has room, the runs after the
      // first page need not wait for another ask.
      if (this.room < this.#aim) return [await this.#single(this.#spare === undefined ? this.#aim : 1)];
      this.#waiting += 1;
      try {
        this.#topUp();
        await condition(() => this.#stock.length > 0 || this.#asking === undefined);
      } finally {
        this.#waiting -= 1;
      }
      if (this.#failure !== undefined) throw this.#failure;
    }
  }

  /** Permits taken and not spent (no request was sent with them): the next runs take them first. */
  putBack(permits: readonly PermitGrant[]): void {
    this.#stock.unshift(...permits);
    this.#dropStale();
  }

  /**
   * The export needs no more permits for now (its pages are done, it continues as new, or it was cancelled or
   * failed): those in the stock go back to the budget for others, and so does an ask on its way, whole (if it
   * still waits, it is withdrawn: no grant goes to an export that has ended). Not cancellable: a cancelled export
   * gives its permits back too.
   */
  release(): Promise<void> {
    const unspent = new Map<string, number>();
    for (const { permitId } of this.#stock.splice(0)) unspent.set(permitId, (unspent.get(permitId) ?? 0) + 1);
    if (this.#asking !== undefined) unspent.set(this.#asking.permitId, this.#asking.count);
    const releases = [...unspent].map(([permitId, count]) => ({ permitId, unused: count }));
    return CancellationScope.nonCancellable(() => this.permits.release(this.projectId, releases));
  }

  /** One permit for a run that waits its turn, with up to `count - 1` more for the stock. */
  async #single(count: number, refusal?: BudgetRefusal): Promise<PermitGrant> {
    const [permit, ...extras] = this.#split(await this.#ask(count, refusal));
    this.#stock.push(...extras);
    // The permit a run waited for is spent by its first request as soon as the run's activity starts: it is
    // not held, so no spendBy (the window's padding covers that delay, as it covers any requester's).
    return { ...(permit as PermitGrant), spendBy: Number.MAX_SAFE_INTEGER };
  }

  /**
   * Asks for the next round when the stock runs below half of it (or a run waits), at most MAX_PERMITS_PER_ASK.
   * One ask at a time, outside the asking run's cancellation scope: other runs wait for its grant.
   */
  #topUp(): void {
    if (this.#asking !== undefined || this.#failure !== undefined || this.room < this.#aim) return;
    if (this.#waiting === 0 && this.#stock.length >= this.#aim / 2) return;
    const count = Math.min(MAX_PERMITS_PER_ASK, Math.max(1, this.#waiting + this.#aim - this.#stock.length));
    const asking = { permitId: uuid4(), count };
    this.#asking = asking;
    void CancellationScope.nonCancellable(() => this.#ask(count, undefined, asking.permitId))
      .then(
        (grant) => this.#stock.push(...this.#split(grant)),
        (error: unknown) => {
          this.#failure = error instanceof Error ? error : new Error(String(error));
        },
      )
      .finally(() => {
        this.#asking = undefined;
      });
  }

  async #ask(count: number, refusal?: BudgetRefusal, permitId?: string): Promise<PermitGrant> {
    const grant = await this.permits.acquire({
      projectId: this.projectId,
      deadlineAt: this.deadlineAt,
      count,
      ...(refusal === undefined ? {} : { refusal }),
      ...(permitId === undefined ? {} : { permitId }),
    });
    this.#spare = grant.spare;
    return grant;
  }

  /** A grant of n permits as n entries of the stock. */
  #split(grant: PermitGrant): PermitGrant[] {
    return Array.from({ length: grant.count }, () => ({ ...grant, count: 1 }));
  }

  #dropStale(): void {
    const now = Date.now();
    while ((this.#stock[0]?.spendBy ?? Infinity) < now) this.#stock.shift();
  }
}
