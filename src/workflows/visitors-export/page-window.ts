import { ApplicationFailure, CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { PageSummary } from '../../activities/visitors-pages';
import { VisitorsExportFailureType } from '../../contract/visitors-export-constants';
import { pageFailed } from './failures';

export interface PageWindowOptions {
  /** Offset of the first page to fetch (0, or where a previous run stopped). */
  firstOffset: number;
  pageSize: number;
  /** Runs in flight at most. */
  concurrency: number;
  /**
   * The budget has room for the export's next round of runs (`concurrency` runs of `runPages()` pages, and the
   * requests that may land past the end). While it has none, the window spends only what is needed: one page a
   * run, one page first, then the page known to exist (the last one came back full with hasMore) plus one ahead:
   * at most one request past the end, and a day that fits one page costs one request.
   */
  hasRoom(): boolean;
  /** Pages the next run covers while the budget has room (at least 1). */
  runPages(): number;
  /**
   * `pages` consecutive pages from `offset`, in order, up to the last page of the data when it comes first
   * (fetchPageRun). A failure names the page (VisitorsExportPageFailed).
   */
  fetchRun(offset: number, pages: number): Promise<PageSummary[]>;
  /** Asked before each new run: true stops issuing (continue-as-new is due) and lets the window drain. */
  shouldPause(): boolean;
  /** Every page the export needs, in offset order, up to and including the last one. */
  onPage(page: PageSummary): void;
  /** After runs settled and new ones were issued (progress display). */
  onChange(): void;
}

/** `end`: the last page is counted. `paused`: stopped early, every issued page counted, nothing in flight. */
export type PageWindowOutcome = { kind: 'end' } | { kind: 'paused' };

/**
 * Fan-out over offset pages with an unknown total, in runs of consecutive pages (one activity each): keeps up to
 * `concurrency` runs in flight over offsets 0, L, 2L… and stops issuing at the first page whose hasMore is false
 * (or that is empty). Runs beyond it are cancelled and their results or failures ignored: each stops at its first
 * page past the end, so at most concurrency - 1 wasted requests while the budget has room, and at most one while
 * it binds. A page the export needs that fails for good ends the window with VisitorsExportPageFailed, after
 * cancelling the runs in flight.
 *
 * Cancelled runs are awaited, but the server may report a running attempt as cancelled before it has ended
 * (its started event is only written when it ends): such a run can still finish after the export was cleaned
 * up, and then fails on the missing staging directory instead of leaving a file behind.
 */
export class PageWindow {
  readonly #options: PageWindowOptions;
  readonly #inFlight = new Map<number, CancellationScope>();
  readonly #finished = new Map<number, PageSummary>();
  readonly #failed = new Map<number, unknown>();
  #nextToIssue: number;
  #nextToCount: number;
  #lastOffset = Infinity;
  /** While the budget binds: the highest offset that may be issued. */
  #allowedThrough: number;
  #paused = false;
  #settledCount = 0;

  constructor(options: PageWindowOptions) {
    this.#options = options;
    this.#nextToIssue = options.firstOffset;
    this.#nextToCount = options.firstOffset;
    this.#allowedThrough = options.firstOffset;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  async run(): Promise<PageWindowOutcome> {
    try {
      for (;;) {
        this.#issue();
        this.#countInOrder();
        this.#options.onChange();
        if (this.#nextToCount > this.#lastOffset) {
          this.#cancelWhere((offset) => offset > this.#lastOffset);
          await this.#drain();
          return { kind: 'end' };
        }
        if (this.#inFlight.size === 0) return { kind: 'paused' };
        const seen = this.#settledCount;
        await condition(() => this.#settledCount !== seen);
      }
    } catch (error) {
      this.#cancelWhere(() => true);
      await CancellationScope.nonCancellable(() => this.#drain());
      throw error;
    }
  }

  #issue(): void {
    const { firstOffset, pageSize, concurrency } = this.#options;
    while (
      !this.#paused &&
      this.#failed.size === 0 &&
      this.#inFlight.size < concurrency &&
      this.#nextToIssue <= this.#lastOffset
    ) {
      // The first page goes alone: it tells whether there is more.
      const room = this.#allowedThrough > firstOffset && this.#options.hasRoom();
      if (!room && this.#nextToIssue > this.#allowedThrough) return;
      // Each run issues at least one page, so continue-as-new can never loop without progress.
      if (this.#nextToIssue > firstOffset && this.#options.shouldPause()) {
        this.#paused = true;
        return;
      }
      const pages = room ? Math.max(1, this.#options.runPages()) : 1;
      this.#launch(this.#nextToIssue, pages);
      this.#nextToIssue += pages * pageSize;
    }
  }

  #launch(offset: number, pages: number): void {
    const scope = new CancellationScope();
    this.#inFlight.set(offset, scope);
    void scope
      .run(() => this.#options.fetchRun(offset, pages))
      .then(
        (run) => {
          for (const page of run) {
            this.#finished.set(page.offset, page);
            if (!page.hasMore || page.rows === 0) this.#lastOffset = Math.min(this.#lastOffset, page.offset);
            else this.#widen(page.offset, page.rows === this.#options.pageSize);
          }
        },
        (error: unknown) => {
          if (!isCancellation(error)) this.#failed.set(offset, error);
        },
      )
      .finally(() => {
        this.#inFlight.delete(offset);
        this.#settledCount += 1;
      });
  }

  /** The next page exists; a full page also lets one more go ahead of it. */
  #widen(offset: number, full: boolean): void {
    const ahead = full ? 2 : 1;
    this.#allowedThrough = Math.max(this.#allowedThrough, offset + ahead * this.#options.pageSize);
  }

  /** Hands over finished pages in offset order; a failed run that the export needs ends the window. */
  #countInOrder(): void {
    while (this.#nextToCount <= this.#lastOffset) {
      const offset = this.#nextToCount;
      if (this.#failed.has(offset)) throw asPageFailed(offset, this.#failed.get(offset));
      const page = this.#finished.get(offset);
      if (page === undefined) return;
      this.#finished.delete(offset);
      this.#nextToCount += this.#options.pageSize;
      this.#options.onPage(page);
    }
  }

  #cancelWhere(predicate: (offset: number) => boolean): void {
    for (const [offset, scope] of this.#inFlight) if (predicate(offset)) scope.cancel();
  }

  async #drain(): Promise<void> {
    await condition(() => this.#inFlight.size === 0);
  }
}

/** The run's failure as VisitorsExportPageFailed: as it is when the run named the page already. */
function asPageFailed(offset: number, error: unknown): unknown {
  const named = error instanceof ApplicationFailure && error.type === VisitorsExportFailureType.pageFailed;
  return named ? error : pageFailed(offset, error);
}
