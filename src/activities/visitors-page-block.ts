import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DocsApiFailureType, docsApiDetailsOf } from '../contract/failure-types';
import type { VisitorsPage } from '../contract/visitors-export';
import { CHUNK_WAIT_MS, PageChunks, type FetchedPage } from './page-block-chunks';
import type { PageRequest, PageSummary } from './visitors-export';
import type { VisitorsPageSteps } from './visitors-page-steps';

/** Permits of one grant, spent in order: each pays for one request, none after `spendBy`. */
export interface PermitSpan {
  count: number;
  grantedAt: number;
  spendBy: number;
}

/** Consecutive pages from `offset`, `concurrency` requests in flight, one permit each. */
export interface PageBlockRequest extends PageRequest {
  /** Oldest first; the block sends at most as many requests as they hold, and skips a permit gone stale. */
  permits: PermitSpan[];
  concurrency: number;
}

/**
 * A page of the block whose request or staging failed: the workflow fetches it again on its own, and a failure
 * that no retry can help (a 4xx, the staging gone) then fails the export as a page activity's would.
 */
export interface PageBlockFailure {
  offset: number;
  /** The grant of the permit its request spent (a 429 is reported to the limiter with it). */
  grantedAt: number;
  rateLimited: boolean;
  retryAfterMs?: number;
  message: string;
}

/** A block's heartbeat details: its pages done (staged) so far, from the first, in offset order. */
export interface PageBlockProgress {
  pages: PageSummary[];
}

const HEARTBEAT_EVERY_MS = 5_000;

export interface PageBlockResult {
  /**
   * The pages fetched and staged (their chunk written), in offset order. With `failed`, they cover every offset
   * from the request's up to the last one sent: the last page of the data (hasMore false, or empty) when the
   * block found it.
   */
  pages: PageSummary[];
  failed: PageBlockFailure[];
  /** Permits spent or skipped as stale: the ones after them were not used and may be spent elsewhere. */
  permitsUsed: number;
}

/**
 * One activity for many pages while the budget has room: three history events and one workflow task per block,
 * not per page. Within it, like a plain script, `concurrency` requests are in flight and each takes the next
 * offset; pages are staged in chunks of consecutive pages (PageChunks) while the lanes' next requests are already
 * on their way. Issuing stops at the last page of the data (requests past it in flight are aborted: at most
 * `concurrency - 1`), when the permits run out or go stale, or after a failure; pages in flight then finish, so
 * none that succeeded is sent twice. Failed pages (their request, or their chunk's write) are returned for the
 * workflow to retry under its own rules (Retry-After, backoff, a 429 reported to the limiter).
 */
export function createPageBlockActivities(steps: VisitorsPageSteps, chunkWaitMs = CHUNK_WAIT_MS) {
  return {
    async fetchVisitorsPageBlock(request: PageBlockRequest): Promise<PageBlockResult> {
      const { cancellationSignal: signal, info } = Context.current();
      const result = await new PageBlock(steps, request, signal, info.attempt, chunkWaitMs).run();
      if (signal.aborted) throw new CancelledFailure('page block cancelled');
      return result;
    },
  };
}

class PageBlock {
  readonly #done = new Map<number, PageSummary>();
  /** The pages done from the first without a gap: what a heartbeat reports. */
  readonly #prefix: PageSummary[] = [];
  readonly #failed = new Map<number, { error: unknown; grantedAt: number }>();
  /** Requests in flight, by page index: aborted when they turn out to be past the end. */
  readonly #inFlight = new Map<number, AbortController>();
  readonly #permits: PermitSpan[];
  #span = 0;
  #spentOfSpan = 0;
  #permitsUsed = 0;
  #next = 0;
  /** Index of the last page of the data, once a page said so. */
  #end = Infinity;
  readonly #chunks: PageChunks;

  constructor(
    private readonly steps: VisitorsPageSteps,
    private readonly request: PageBlockRequest,
    private readonly signal: AbortSignal,
    attempt: number,
    chunkWaitMs: number,
  ) {
    this.#permits = request.permits.map((span) => ({ ...span }));
    // Chunks are named by the block's first offset and attempt: what tells the merge which one the workflow
    // counted when several hold a page (resolveStagedPages).
    const chunk = { exportKey: request.exportKey, blockOffset: request.offset, attempt };
    this.#chunks = new PageChunks(
      {
        write: (pages) =>
          steps.stageChunk(
            chunk,
            pages.map(({ index, page }) => ({ offset: this.#pageRequest(index).offset, page })),
            signal,
          ),
        written: (pages, summaries) => {
          pages.forEach((page, at) => {
            const summary = summaries[at];
            if (summary !== undefined) this.#done.set(page.index, summary);
          });
          this.#beat();
        },
        failed: (pages, error) => {
          for (const { index, grantedAt } of pages) this.#failed.set(index, { error, grantedAt });
        },
        isFailed: (index) => this.#failed.has(index),
      },
      chunkWaitMs,
    );
  }

  async run(): Promise<PageBlockResult> {
    const permits = this.#permits.reduce((sum, span) => sum + span.count, 0);
    const lanes = Math.max(1, Math.min(this.request.concurrency, permits));
    this.#beat();
    // Beats on a timer too: a worker that dies is noticed after the heartbeat timeout, whatever the pages do.
    const timer = setInterval(() => this.#beat(), HEARTBEAT_EVERY_MS);
    const wake = (): void => this.#chunks.changed();
    this.signal.addEventListener('abort', wake);
    try {
      await Promise.all(Array.from({ length: lanes }, () => this.#lane()));
      await this.#chunks.finish(!this.signal.aborted);
    } finally {
      this.signal.removeEventListener('abort', wake);
      clearInterval(timer);
    }
    const pages: PageSummary[] = [];
    const failed: PageBlockFailure[] = [];
    for (let index = 0; index < this.#next && index <= this.#end; index++) {
      const page = this.#done.get(index);
      if (page !== undefined) {
        pages.push(page);
        continue;
      }
      const failure = this.#failed.get(index);
      if (failure === undefined) break;
      failed.push(this.#describe(index, failure.error, failure.grantedAt));
    }
    return { pages, failed, permitsUsed: this.#permitsUsed };
  }

  /**
   * Sends the next page while the block may: its answer joins the chunks, staged while the lane's next request
   * runs. Waits before a request while too many pages are not written yet (a slow write, or a slow page holding
   * up a chunk), so that memory stays bounded.
   */
  async #lane(): Promise<void> {
    const stopped = (): boolean => this.signal.aborted || this.#failed.size > 0 || this.#next > this.#end;
    while (!stopped()) {
      await this.#chunks.room(stopped);
      if (stopped()) break;
      const grantedAt = this.#takePermit();
      if (grantedAt === undefined) break;
      const index = this.#next++;
      const page = await this.#fetch(index, grantedAt);
      if (page !== undefined) this.#chunks.add({ index, page, grantedAt } satisfies FetchedPage);
    }
  }

  async #fetch(index: number, grantedAt: number): Promise<VisitorsPage | undefined> {
    const abort = new AbortController();
    this.#inFlight.set(index, abort);
    try {
      const page = await this.steps.request(
        this.#pageRequest(index),
        AbortSignal.any([this.signal, abort.signal]),
      );
      if (!page.hasMore || page.visitors.length === 0) this.#endAt(index);
      return index > this.#end ? undefined : page;
    } catch (error) {
      // Aborted because an earlier page was the last: not needed, not a failure.
      if (index <= this.#end && !this.signal.aborted) {
        this.#failed.set(index, { error, grantedAt });
        this.#chunks.changed(); // lanes waiting for room stop
      }
      return undefined;
    } finally {
      this.#inFlight.delete(index);
    }
  }

  /**
   * Heartbeats the pages done so far from the block's first, in order (no failure among them): if the worker
   * dies, the workflow counts them from the heartbeat timeout's last details and does not send them again.
   */
  #beat(): void {
    for (
      let page = this.#done.get(this.#prefix.length);
      page !== undefined && this.#prefix.length <= this.#end;
      page = this.#done.get(this.#prefix.length)
    ) {
      this.#prefix.push(page);
    }
    const progress: PageBlockProgress = { pages: [...this.#prefix] };
    Context.current().heartbeat(progress);
  }

  #endAt(index: number): void {
    if (index >= this.#end) return;
    this.#end = index;
    for (const [other, abort] of this.#inFlight) if (other > index) abort.abort();
    this.#chunks.dropAfter(index);
  }

  /** The next permit not gone stale, oldest first; undefined when none is left. */
  #takePermit(): number | undefined {
    const now = Date.now();
    for (let span = this.#permits[this.#span]; span !== undefined; span = this.#permits[this.#span]) {
      if (this.#spentOfSpan < span.count && now <= span.spendBy) {
        this.#spentOfSpan += 1;
        this.#permitsUsed += 1;
        return span.grantedAt;
      }
      this.#permitsUsed += span.count - this.#spentOfSpan;
      this.#span += 1;
      this.#spentOfSpan = 0;
    }
    return undefined;
  }

  #pageRequest(index: number): PageRequest {
    const { exportKey, projectId, dateFrom, dateTo, offset, limit } = this.request;
    return { exportKey, projectId, dateFrom, dateTo, offset: offset + index * limit, limit };
  }

  #describe(index: number, error: unknown, grantedAt: number): PageBlockFailure {
    const retryAfterMs =
      error instanceof ApplicationFailure ? docsApiDetailsOf(error.details)?.retryAfterMs : undefined;
    return {
      offset: this.#pageRequest(index).offset,
      grantedAt,
      rateLimited: error instanceof ApplicationFailure && error.type === DocsApiFailureType.rateLimited,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      message: error instanceof Error ? error.message : String(error),
    };
  }
}
