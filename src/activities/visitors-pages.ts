import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DocsApiFailureType, docsApiDetailsOf } from '../contract/failure-types';
import type { VisitorsPage, VisitorTotals } from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import type { ExportStaging } from '../exports/staging';
import { exportFailures } from './export-failures';
import { toApplicationFailure } from './failures';

/** One offset page of an export's range. */
export interface PageRequest {
  exportKey: string;
  projectId: string;
  dateFrom: string;
  dateTo: string;
  offset: number;
  limit: number;
}

/** What the page activity reports per page: counts only, the rows stay in staging. */
export interface PageSummary {
  offset: number;
  rows: number;
  hasMore: boolean;
  totals: VisitorTotals;
}

/** Permits of one grant, spent in order: each pays for one request, none after `spendBy`. */
export interface PermitSpan {
  count: number;
  grantedAt: number;
  spendBy: number;
}

/** A run of consecutive pages from `offset`: one request per permit, at most as many as the permits hold. */
export interface PageRunRequest extends PageRequest {
  permits: PermitSpan[];
  /** How many times the workflow started a run at this offset: with the offset, it orders the run's chunks. */
  attempt: number;
}

/** A request that failed after some of the run's pages were staged: the workflow fetches it again. */
export interface PageRunStop {
  offset: number;
  /** The grant of the permit its request spent (a 429 is reported to the limiter with it). */
  grantedAt: number;
  rateLimited: boolean;
  retryAfterMs?: number;
  message: string;
}

export interface PageRunResult {
  /** The pages staged, in offset order from the request's, at least one; up to the last page of the data. */
  pages: PageSummary[];
  /** Permits spent or skipped as stale: the ones after them were not used and may be spent elsewhere. */
  permitsUsed: number;
  stopped?: PageRunStop;
}

/** A run's heartbeat details: its pages staged so far, from the first, in offset order. */
export interface PageRunProgress {
  pages: PageSummary[];
}

/** Pages fetched and not yet staged that a run holds at most: its next request waits for the write beyond this. */
export const MAX_CHUNK_PAGES = 16;
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The export's one page activity: a run of consecutive pages, one request at a time, each paid for with the next
 * permit. The pages fetched while a write is in flight are staged together as the next chunk, while the next
 * request is already on its way; after each chunk the run heartbeats the pages staged so far, so a worker that
 * dies costs only the pages after its last heartbeat. The run stops at the last page of the data, when its
 * permits run out or go stale, or at a failure: a failure of its first page is thrown (the workflow retries it
 * under its own rules); a later one ends the run with the pages before it.
 */
export function createVisitorsPagesActivities(
  docsApi: DocsApiClient,
  stagingOf: (exportKey: string) => ExportStaging,
) {
  return {
    async fetchVisitorsPages(request: PageRunRequest): Promise<PageRunResult> {
      const { cancellationSignal: signal } = Context.current();
      const run = new PageRun(docsApi, stagingOf(request.exportKey), request, signal);
      const result = await run.fetch();
      if (signal.aborted) throw new CancelledFailure('page run cancelled');
      return result;
    },
  };
}

class PageRun {
  readonly #staged: PageSummary[] = [];
  /** Fetched and not staged yet, in offset order. */
  #pending: { offset: number; page: VisitorsPage }[] = [];
  #writing: Promise<void> | undefined;
  #writeFailure: { offset: number; error: unknown; grantedAt?: number } | undefined;
  readonly #permits: PermitSpan[];
  #permitsUsed = 0;

  constructor(
    private readonly docsApi: DocsApiClient,
    private readonly staging: ExportStaging,
    private readonly request: PageRunRequest,
    private readonly signal: AbortSignal,
  ) {
    this.#permits = request.permits.map((span) => ({ ...span }));
  }

  async fetch(): Promise<PageRunResult> {
    this.#beat();
    // Beats on a timer too: a worker that dies mid-request is noticed after the heartbeat timeout.
    const timer = setInterval(() => this.#beat(), HEARTBEAT_EVERY_MS);
    let failure: { offset: number; error: unknown; grantedAt?: number } | undefined;
    try {
      for (let offset = this.request.offset; !this.signal.aborted && !this.#writeFailure;) {
        const grantedAt = this.#takePermit();
        if (grantedAt === undefined) break;
        let page: VisitorsPage;
        try {
          page = await this.#get(offset);
        } catch (error) {
          failure = { offset, error, grantedAt };
          break;
        }
        this.#pending.push({ offset, page });
        if (!page.hasMore || page.visitors.length === 0) break;
        offset += this.request.limit;
        if (this.#pending.length >= MAX_CHUNK_PAGES) await this.#writing;
        this.#writeNext();
      }
      await this.#writing;
      this.#writeNext();
      await this.#writing;
    } finally {
      clearInterval(timer);
    }
    const stop = this.#writeFailure ?? failure;
    if (stop !== undefined && this.#staged.length === 0) throw stop.error;
    return {
      pages: this.#staged,
      permitsUsed: this.#permitsUsed,
      ...(stop === undefined ? {} : { stopped: describe(stop) }),
    };
  }

  async #get(offset: number): Promise<VisitorsPage> {
    const { projectId, dateFrom, dateTo, limit } = this.request;
    try {
      return await this.docsApi.getVisitors(
        projectId,
        { dateFrom, dateTo, limit, offset },
        { signal: this.signal },
      );
    } catch (error) {
      if (this.signal.aborted) throw new CancelledFailure('page run cancelled while a request was in flight');
      throw toApplicationFailure(error);
    }
  }

  /** Stages the pages fetched so far as one chunk, unless a write is in flight (they join the next one). */
  #writeNext(): void {
    if (this.#writing !== undefined || this.#pending.length === 0 || this.signal.aborted) return;
    if (this.#writeFailure !== undefined) return;
    const pages = this.#pending;
    this.#pending = [];
    const chunk = { runOffset: this.request.offset, attempt: this.request.attempt };
    const rows = pages.map(({ offset, page }) => ({ offset, rows: page.visitors }));
    this.#writing = exportFailures(() => this.staging.writeChunk(chunk, rows, this.signal))
      .then(
        () => {
          for (const { offset, page } of pages) {
            this.#staged.push({
              offset,
              rows: page.visitors.length,
              hasMore: page.hasMore,
              totals: page.totals,
            });
          }
          this.#beat();
        },
        (error: unknown) => {
          this.#writeFailure = { offset: pages[0]?.offset ?? this.request.offset, error };
        },
      )
      .finally(() => {
        this.#writing = undefined;
      });
  }

  #beat(): void {
    const progress: PageRunProgress = { pages: [...this.#staged] };
    Context.current().heartbeat(progress);
  }

  /** The next permit not gone stale, oldest first; undefined when none is left. */
  #takePermit(): number | undefined {
    const now = Date.now();
    for (let span = this.#permits[0]; span !== undefined; span = this.#permits[0]) {
      if (span.count > 0 && now <= span.spendBy) {
        span.count -= 1;
        this.#permitsUsed += 1;
        return span.grantedAt;
      }
      this.#permitsUsed += span.count;
      this.#permits.shift();
    }
    return undefined;
  }
}

function describe({
  offset,
  error,
  grantedAt = 0,
}: {
  offset: number;
  error: unknown;
  grantedAt?: number;
}): PageRunStop {
  const retryAfterMs =
    error instanceof ApplicationFailure ? docsApiDetailsOf(error.details)?.retryAfterMs : undefined;
  return {
    offset,
    grantedAt,
    rateLimited: error instanceof ApplicationFailure && error.type === DocsApiFailureType.rateLimited,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    message: error instanceof Error ? error.message : String(error),
  };
}
