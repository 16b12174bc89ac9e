import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { PageSummary } from '../../activities/visitors-export';
import { pageFailed } from './failures';

export interface PageWindowOptions {
  /** Offset of the first page to fetch (0, or where a previous run stopped). */
  firstOffset: number;
  pageSize: number;
  concurrency: number;
  /**
   * Spend only what is needed: one page first, then the page known to exist (the last one came back full with
   * hasMore) plus one ahead. At most one request past the end; a day that fits one page costs one request.
   */
  slowStart?: boolean;
  /**
   * With slowStart: how many pages may go ahead of one that came back full (default 2: the next one, known to
   * exist, and one past it). Asked at each full page: `concurrency` when the budget has room for the
   * `concurrency - 1` requests that may land past the end, 2 when it binds.
   */
  aheadOfFullPage?: () => number;
  fetchPage(offset: number): Promise<PageSummary>;
  /** Asked before each new page: true stops issuing (continue-as-new is due) and lets the window drain. */
  shouldPause(): boolean;
  /** Every page the export needs, in offset order, up to and including the last one. */
  onPage(page: PageSummary): void;
  /** After pages settled and new ones were issued (progress display). */
  onChange(): void;
}

/** `end`: the last page is counted. `paused`: stopped early, every issued page counted, nothing in flight. */
export type PageWindowOutcome = { kind: 'end' } | { kind: 'paused' };

/**
 * Fan-out over offset pages with an unknown total: keeps `concurrency` pages in flight over offsets 0, L, 2L…
 * and stops issuing at the first page whose hasMore is false (or that is empty). Pages in flight beyond it are
 * cancelled and their results or failures ignored: at most concurrency - 1 wasted requests. A page the export
 * needs that fails for good ends the window with VisitorsExportPageFailed, after cancelling the pages in flight.
 *
 * Cancelled pages are awaited, but the server may report a running attempt as cancelled before it has ended
 * (its started event is only written when it ends): such a page can still finish after the export was cleaned
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
  /** With slowStart: the highest offset that may be issued. */
  #allowedThrough: number;
  #paused = false;
  #settledCount = 0;

  constructor(options: PageWindowOptions) {
    this.#options = options;
    this.#nextToIssue = options.firstOffset;
    this.#nextToCount = options.firstOffset;
    this.#allowedThrough = options.slowStart === true ? options.firstOffset : Infinity;
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
    while (
      !this.#paused &&
      this.#failed.size === 0 &&
      this.#inFlight.size < this.#options.concurrency &&
      this.#nextToIssue <= this.#lastOffset &&
      this.#nextToIssue <= this.#allowedThrough
    ) {
      // Each run issues at least one page, so continue-as-new can never loop without progress.
      if (this.#nextToIssue > this.#options.firstOffset && this.#options.shouldPause()) {
        this.#paused = true;
        return;
      }
      this.#launch(this.#nextToIssue);
      this.#nextToIssue += this.#options.pageSize;
    }
  }

  #launch(offset: number): void {
    const scope = new CancellationScope();
    this.#inFlight.set(offset, scope);
    void scope
      .run(() => this.#options.fetchPage(offset))
      .then(
        (page) => {
          this.#finished.set(offset, page);
          if (!page.hasMore || page.rows === 0) this.#lastOffset = Math.min(this.#lastOffset, offset);
          else this.#widen(offset, page.rows === this.#options.pageSize);
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
    if (this.#options.slowStart !== true) return;
    const ahead = full ? Math.max(2, this.#options.aheadOfFullPage?.() ?? 2) : 1;
    this.#allowedThrough = Math.max(this.#allowedThrough, offset + ahead * this.#options.pageSize);
  }

  /** Hands over finished pages in offset order; a failed page that the export needs ends the window. */
  #countInOrder(): void {
    while (this.#nextToCount <= this.#lastOffset) {
      const offset = this.#nextToCount;
      if (this.#failed.has(offset)) throw pageFailed(offset, this.#failed.get(offset));
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
