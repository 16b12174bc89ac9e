import { ApplicationFailure, CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { PageSummary } from '../../activities/visitors-pages';
import { VisitorsExportFailureType } from '../../contract/visitors-export-constants';
import { pageFailed } from './failures';

export interface PageWindowOptions {
  /** Offset of the first page to fetch (0, or where a previous run stopped). */
  firstOffset: number;
  pageSize: number;
  /** Requests in flight at most, over every run. */
  concurrency: number;
  /**
   * The budget has room for the next run. While it has none: one page a run, the first page alone, then the page
   * known to exist plus one ahead (at most one request past the end).
   */
  hasRoom(): boolean;
  /** Pages the next run covers while the budget has room (at least 1). */
  runPages(): number;
  /** Requests a run sends at once while the budget has room (at least 1, at most `concurrency`). */
  runWidth(): number;
  /** `pages` consecutive pages from `offset` up to the last page, `width` requests at a time (fetchPageRun). */
  fetchRun(offset: number, pages: number, width: number): Promise<PageSummary[]>;
  /** Asked before each new run: true stops issuing (continue-as-new is due) and lets the window drain. */
  shouldPause(): boolean;
  /** Every page the export needs, in offset order, up to and including the last one. */
  onPage(page: PageSummary): void;
  /** After runs settled and new ones were issued (progress display). */
  onChange(): void;
}

/**
 * `end`: the last page is counted; `pastEnd`, the page after it if it came back. `paused`: stopped early,
 * every issued page counted, nothing in flight.
 */
export type PageWindowOutcome =
  { kind: 'end'; last: PageSummary; pastEnd?: PageSummary } | { kind: 'paused' };

/**
 * Fan-out over offset pages with an unknown total, in runs of consecutive pages (one activity each), up to
 * `concurrency` requests in flight; stops issuing at the first page whose hasMore is false. Runs past it are
 * cancelled, their failures ignored (at most concurrency - 1 requests past the end, one while the budget binds).
 * A needed page that fails ends the window with VisitorsExportPageFailed. Cancelled runs are awaited, so none
 * still writes when the export cleans up.
 */
export class PageWindow {
  readonly #options: PageWindowOptions;
  /** Runs in flight by offset: their scope and how many requests they send at once. */
  readonly #inFlight = new Map<number, { scope: CancellationScope; width: number }>();
  #requestsInFlight = 0;
  readonly #finished = new Map<number, PageSummary>();
  readonly #failed = new Map<number, unknown>();
  #nextToIssue: number;
  #nextToCount: number;
  #lastOffset = Infinity;
  /** While the budget binds: the highest offset that may be issued. */
  #allowedThrough: number;
  #paused = false;
  #last: PageSummary | undefined;
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
          const pastEnd = this.#finished.get(this.#lastOffset + this.#options.pageSize);
          return { kind: 'end', last: this.#last as PageSummary, ...(pastEnd ? { pastEnd } : {}) };
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
      this.#requestsInFlight < concurrency &&
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
      const width = Math.min(pages, concurrency, room ? Math.max(1, this.#options.runWidth()) : 1);
      if (this.#requestsInFlight + width > concurrency) return;
      this.#launch(this.#nextToIssue, pages, width);
      this.#nextToIssue += pages * pageSize;
    }
  }

  #launch(offset: number, pages: number, width: number): void {
    const scope = new CancellationScope();
    this.#inFlight.set(offset, { scope, width });
    this.#requestsInFlight += width;
    void scope
      .run(() => this.#options.fetchRun(offset, pages, width))
      .then(
        (run) => {
          for (const page of run) {
            this.#finished.set(page.offset, page);
            if (!page.hasMore) this.#lastOffset = Math.min(this.#lastOffset, page.offset);
            else this.#widen(page.offset, page.rows === this.#options.pageSize);
          }
        },
        (error: unknown) => {
          if (!isCancellation(error)) this.#failed.set(offset, error);
        },
      )
      .finally(() => {
        this.#inFlight.delete(offset);
        this.#requestsInFlight -= width;
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
      this.#last = page;
      this.#options.onPage(page);
    }
  }

  #cancelWhere(predicate: (offset: number) => boolean): void {
    for (const [offset, { scope }] of this.#inFlight) if (predicate(offset)) scope.cancel();
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
