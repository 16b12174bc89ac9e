import type { VisitorsPage } from '../contract/visitors-export';
import type { PageSummary } from './visitors-export';

/**
 * Consecutive pages a block stages as one object: over object storage one PutObject (and one GetObject for the
 * merge) instead of sixteen, on disk one temporary file, fsync and rename. 16 pages of 250 rows are about 250 KB.
 */
export const CHUNK_PAGES = 16;
/**
 * A shorter run goes once its first page has waited this long: when pages come slowly (one lane, a slow service)
 * a chunk still goes about as often as the worker heartbeats (every 250 ms at most), so a worker that dies loses
 * little more than the pages in flight, and progress moves.
 */
export const CHUNK_WAIT_MS = 250;
/** Pages fetched and not yet written that a block holds at most: its lanes wait for writes beyond this. */
export const MAX_UNWRITTEN_PAGES = 4 * CHUNK_PAGES;

/** A page of the block as fetched: its index in the block, the answer, the grant of the permit it spent. */
export interface FetchedPage {
  index: number;
  page: VisitorsPage;
  grantedAt: number;
}

export interface ChunkHooks {
  /** Writes consecutive pages (in index order) as one staged object; their counts. */
  write(pages: readonly FetchedPage[]): Promise<PageSummary[]>;
  written(pages: readonly FetchedPage[], summaries: readonly PageSummary[]): void;
  failed(pages: readonly FetchedPage[], error: unknown): void;
  /** Whether the request of the page at `index` failed: at the end, the pages after it form their own chunks. */
  isFailed(index: number): boolean;
}

/**
 * A block's fetched pages on their way to staging, in chunks: as soon as the run of fetched pages from the first
 * one not yet staged reaches CHUNK_PAGES, they go as one object, while the lanes' requests go on; `finish` writes
 * what is left. A page is done only once its chunk is written (`written`); a chunk whose write fails makes all its
 * pages failed (`failed`), for the workflow to fetch again alone.
 */
export class PageChunks {
  /** Fetched pages not yet taken into a chunk, with when each came (for CHUNK_WAIT_MS), by index. */
  readonly #fetched = new Map<number, { page: FetchedPage; at: number }>();
  /** Index of the first page not yet taken into a chunk (nor skipped as failed, at the end). */
  #first = 0;
  /** Pages of the chunks being written. */
  #writing = 0;
  readonly #writes = new Set<Promise<void>>();
  #waiting: (() => void)[] = [];
  /** Writes the waiting run once its first page has waited CHUNK_WAIT_MS. */
  #timer: NodeJS.Timeout | undefined;

  /** `waitMs`: CHUNK_WAIT_MS; Infinity makes chunks by count alone (tests that assert their exact layout). */
  constructor(
    private readonly hooks: ChunkHooks,
    private readonly waitMs = CHUNK_WAIT_MS,
  ) {}

  /** Pages held in memory: fetched and not written yet. */
  get unwritten(): number {
    return this.#fetched.size + this.#writing;
  }

  add(page: FetchedPage): void {
    this.#fetched.set(page.index, { page, at: Date.now() });
    this.#form(false);
    this.changed();
  }

  /** Forgets the pages past the last page of the data (fetched before it was known): they are never staged. */
  dropAfter(last: number): void {
    for (const index of this.#fetched.keys()) if (index > last) this.#fetched.delete(index);
    this.changed();
  }

  /** Wakes the lanes waiting for room: a page came, a write ended, or the block may have to stop. */
  changed(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }

  /** Returns once fewer than MAX_UNWRITTEN_PAGES pages are held, or as soon as `stop()` says the lane stops. */
  async room(stop: () => boolean): Promise<void> {
    while (this.unwritten >= MAX_UNWRITTEN_PAGES && !stop()) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  /**
   * Once no request is left: writes the runs of fetched pages left (`flush`: not when the block was cancelled),
   * in chunks on either side of a failed page, and waits for every write.
   */
  async finish(flush: boolean): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (flush) this.#form(true);
    while (this.#writes.size > 0) await Promise.all(this.#writes);
  }

  /** Takes chunks from the first page not yet staged: whole ones, and at the end (`last`) what is left too. */
  #form(last: boolean): void {
    for (;;) {
      while (last && this.hooks.isFailed(this.#first)) this.#first += 1;
      const pages: FetchedPage[] = [];
      for (
        let entry = this.#fetched.get(this.#first);
        entry !== undefined && pages.length < CHUNK_PAGES;
        entry = this.#fetched.get(this.#first + pages.length)
      ) {
        pages.push(entry.page);
      }
      if (pages.length === 0) return;
      if (pages.length < CHUNK_PAGES && !last) {
        const waitedMs = Date.now() - (this.#fetched.get(this.#first)?.at ?? Date.now());
        if (waitedMs < this.waitMs) return this.#flushLater(this.waitMs - waitedMs);
      }
      for (const page of pages) this.#fetched.delete(page.index);
      this.#first += pages.length;
      this.#write(pages);
    }
  }

  /** The run from the first page not yet staged is short and young: look again when it is old enough. */
  #flushLater(ms: number): void {
    if (this.#timer !== undefined || !Number.isFinite(ms)) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#form(false);
    }, ms);
  }

  #write(pages: readonly FetchedPage[]): void {
    this.#writing += pages.length;
    const write: Promise<void> = this.hooks
      .write(pages)
      .then(
        (summaries) => this.hooks.written(pages, summaries),
        (error: unknown) => this.hooks.failed(pages, error),
      )
      .finally(() => {
        this.#writing -= pages.length;
        this.#writes.delete(write);
        this.changed();
      });
    // Should a hook throw, its pages are neither done nor failed: the block's result stops before them and the
    // workflow fetches them again. Observed here, so that it is never an unhandled rejection meanwhile.
    write.catch(() => undefined);
    this.#writes.add(write);
  }
}
