import type { PageRequest, PageSummary } from '../../activities/visitors-export';
import { MAX_PERMITS_PER_ASK } from '../../contract/budget';
import { fetchPageWithinBudget } from './budgeted-page';
import { fetchPageBlock } from './page-block';
import type { PagePermits } from './page-permits';
import { PageWindow, type PageWindowOutcome } from './page-window';

export interface AdaptivePagesOptions {
  /** Offset of the first page to fetch (0, or where a previous run stopped). */
  firstOffset: number;
  pageSize: number;
  concurrency: number;
  permits: PagePermits;
  pageRequest(offset: number): PageRequest;
  /** Asked before each block or page but the first: true stops (continue-as-new is due) once nothing is in flight. */
  shouldPause(): boolean;
  /** Every page the export needs, in offset order, up to and including the last one. */
  onPage(page: PageSummary): void;
  /** Requests that may be in flight changed (progress display). */
  onChange(inFlight: number): void;
}

/** A block runs about this long at the pace of the one before: progress moves, permits stay fresh. */
const BLOCK_TARGET_MS = 2_000;

/**
 * The export's pages within the analytics budget, in the mode the budget allows, switching as it changes:
 * - **The budget binds** (or is not known yet): the page window's slow start, one activity and one permit per
 *   page, at most one request past the end (see PageWindow).
 * - **It has room** (PagePermits.open): blocks of consecutive pages, each one activity with `concurrency`
 *   requests in flight and a batch of permits (see fetchPageBlock), at most `concurrency - 1` requests past the
 *   end. The first block is four requests per lane; later ones last about BLOCK_TARGET_MS.
 */
export async function fetchPagesAdaptively(options: AdaptivePagesOptions): Promise<PageWindowOutcome> {
  const { pageSize, concurrency, permits } = options;
  let next = options.firstOffset;
  let blockPages = clampBlock(4 * concurrency, concurrency);
  let pagesPerTarget: number | undefined;
  const count = (page: PageSummary): boolean => {
    options.onPage(page);
    next = page.offset + pageSize;
    return !page.hasMore || page.rows === 0;
  };
  for (;;) {
    if (!permits.open) {
      const window: PageWindow = new PageWindow({
        firstOffset: next,
        pageSize,
        concurrency,
        slowStart: true,
        fetchPage: (offset) =>
          fetchPageWithinBudget((refusal) => permits.take(refusal), options.pageRequest(offset)),
        shouldPause: () => options.shouldPause() || permits.open,
        onPage: (page) => void count(page),
        onChange: () => options.onChange(window.inFlight),
      });
      const outcome = await window.run();
      if (outcome.kind === 'end' || !permits.open) return outcome;
    }
    if (next > options.firstOffset && options.shouldPause()) return { kind: 'paused' };
    options.onChange(Math.min(concurrency, blockPages));
    const startedAt = Date.now();
    // Until a whole block has shown the pace, the next one may be four times as long.
    const nextPages = pagesPerTarget ?? clampBlock(4 * blockPages, concurrency);
    const pages = await fetchPageBlock(
      permits,
      options.pageRequest(next),
      blockPages,
      nextPages,
      concurrency,
    );
    for (const page of pages) {
      if (count(page)) {
        options.onChange(0);
        return { kind: 'end' };
      }
    }
    if (pages.length >= blockPages) {
      blockPages = clampBlock(
        (pages.length * BLOCK_TARGET_MS) / Math.max(1, Date.now() - startedAt),
        concurrency,
      );
    }
    options.onChange(0);
  }
}

function clampBlock(pages: number, concurrency: number): number {
  return Math.max(concurrency, Math.min(MAX_PERMITS_PER_ASK, Math.round(pages)));
}
