import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DocsApiFailureType, docsApiDetailsOf } from '../contract/failure-types';
import { createHash } from 'node:crypto';
import type { PageSummary, VisitorsPage } from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import {
  destinationUnavailable,
  isPermanent,
  type ChunkWriter,
  type ExportStaging,
  type StagedPageRows,
} from '../exports/destination';

export interface PageRequest {
  exportKey: string;
  projectId: string;
  dateFrom: string;
  dateTo: string;
  offset: number;
  limit: number;
}

/** Permits of one grant, spent in order: each pays for one request, none after `spendBy`. */
export interface PermitSpan {
  count: number;
  grantedAt: number;
  spendBy: number;
}

/** Consecutive pages from `offset`, one request per permit, `width` (default 1) in flight at once. */
export interface PageRunRequest extends PageRequest {
  permits: PermitSpan[];
  /** With the offset, orders the run's chunks. */
  attempt: number;
  width?: number;
}

export interface PageRunResult {
  /** Staged, in offset order from the request's, at least one. */
  pages: PageSummary[];
  /** Permits spent or skipped as stale; the rest were not used. */
  permitsUsed: number;
  /** A request that failed after some of the run's pages were staged: the workflow fetches it again. */
  stopped?: ReturnType<typeof describe>;
  /** The page past the last one, and page 0 read again beside the last pages, when they came back. */
  pastEnd?: PageSummary;
  firstAgain?: PageSummary;
}

/** Details of a run's heartbeats: the pages staged so far (a cancelled run's details: `{ permitsUsed }`). */
export interface PageRunProgress {
  pages: PageSummary[];
}

/** Pages fetched and not staged a run holds at most: its next request waits for the write beyond this. */
export const MAX_CHUNK_PAGES = 16;
/** Writes of a chunk from memory, 1 s ×2 apart, before a passing destination fault ends the export. */
const CHUNK_WRITE_ATTEMPTS = 6;
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The page activity: a run of consecutive pages, a permit per request, `width` in flight in offset order. Pages
 * fetched while a chunk is written form the next chunk; the run heartbeats its staged pages after each chunk. It
 * stops at the last page, when its permits run out or go stale, or at a failure: one of its first page is thrown,
 * a later one ends the run with the pages before it.
 */
export function createVisitorsPagesActivities(
  docsApi: DocsApiClient,
  stagingOf: (exportKey: string) => ExportStaging,
) {
  return {
    async fetchVisitorsPages(request: PageRunRequest): Promise<PageRunResult> {
      const { cancellationSignal: signal } = Context.current();
      const run = new PageRun(docsApi, stagingOf(request.exportKey), request, signal);
      try {
        const result = await run.fetch();
        if (!signal.aborted) return result;
      } catch (error) {
        if (!signal.aborted) throw error;
      }
      throw new CancelledFailure('page run cancelled', [{ permitsUsed: run.permitsUsed }]);
    },
  };
}

interface RunStop {
  offset: number;
  error: unknown;
  grantedAt?: number;
}

class PageRun {
  readonly #staged: PageSummary[] = [];
  /** Fetched, in offset order from #nextToStage, and not staged yet. */
  #pending: { offset: number; page: VisitorsPage }[] = [];
  /** Fetched out of order: waiting for the pages before them. */
  readonly #fetched = new Map<number, VisitorsPage>();
  #nextToStage: number;
  #writing: Promise<void> | undefined;
  /** The first offset not needed from this run: past the last page, or failed. */
  #stopAt = Infinity;
  #stop: RunStop | undefined;
  /** The first 429 before the last page: the limiter must hear of it even behind a failure. */
  #rateLimited: RunStop | undefined;
  #endAt = Infinity;
  readonly #summaries = new Map<number, PageSummary>();
  #writeFailure: RunStop | undefined;
  #firstAgain: PageSummary | undefined;
  readonly #permits: PermitSpan[];
  #permitsUsed = 0;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #width: number;

  constructor(
    private readonly docsApi: DocsApiClient,
    private readonly staging: ExportStaging,
    private readonly request: PageRunRequest,
    private readonly signal: AbortSignal,
  ) {
    this.#permits = request.permits.map((span) => ({ ...span }));
    this.#nextToStage = request.offset;
    this.#width = Math.max(1, request.width ?? 1);
  }

  get permitsUsed(): number {
    return this.#permitsUsed;
  }

  async fetch(): Promise<PageRunResult> {
    this.#beat();
    // Beats on a timer too: a worker that dies mid-request is noticed after the heartbeat timeout.
    const timer = setInterval(() => this.#beat(), HEARTBEAT_EVERY_MS);
    try {
      for (let offset = this.request.offset; ; offset += this.request.limit) {
        while (!this.#over(offset) && (this.#inFlight.size >= this.#width || this.#backlogged)) {
          await Promise.race([...this.#inFlight, ...(this.#writing ? [this.#writing] : [])]);
        }
        if (this.#over(offset)) break;
        const grantedAt = this.#takePermit();
        if (grantedAt === undefined) break;
        const request = this.#send(offset, grantedAt).finally(() => this.#inFlight.delete(request));
        this.#inFlight.add(request);
      }
      while (this.#inFlight.size > 0) await Promise.race(this.#inFlight);
      await this.#writing;
      this.#writeNext(true);
      await this.#writing;
    } finally {
      clearInterval(timer);
    }
    if (this.#writeFailure !== undefined) throw this.#writeFailure.error;
    const pastEnd = this.#summaries.get(this.#endAt);
    const firstAgain = this.#firstAgain;
    const stop = this.#stop;
    const limited = (this.#rateLimited?.offset ?? Infinity) < this.#endAt ? this.#rateLimited : undefined;
    if (stop !== undefined && this.#staged.length === 0) throw (limited ?? stop).error;
    return {
      pages: this.#staged,
      permitsUsed: this.#permitsUsed,
      ...(pastEnd === undefined ? {} : { pastEnd }),
      ...(firstAgain === undefined ? {} : { firstAgain }),
      ...(stop === undefined ? {} : { stopped: describe(stop, limited) }),
    };
  }

  /** No request is sent from `offset` on: cancelled, a write failed, or past the last page or a failure. */
  #over(offset: number): boolean {
    return this.signal.aborted || this.#writeFailure !== undefined || offset >= this.#stopAt;
  }

  get #backlogged(): boolean {
    return this.#writing !== undefined && this.#pending.length >= MAX_CHUNK_PAGES;
  }

  async #send(offset: number, grantedAt: number): Promise<void> {
    let page: VisitorsPage;
    try {
      page = await this.#get(offset);
    } catch (error) {
      if (isRateLimited(error)) this.#rateLimited ??= { offset, error, grantedAt };
      if (offset < this.#stopAt) {
        this.#stopAt = offset;
        this.#stop = { offset, error, grantedAt };
      }
      return;
    }
    this.#summaries.set(offset, summaryOf(offset, page));
    if (offset >= this.#stopAt) return;
    if (!page.hasMore) {
      // The last page: whatever was sent past it is not needed.
      this.#stopAt = offset + this.request.limit;
      this.#endAt = this.#stopAt;
      if (this.#stop !== undefined && this.#stop.offset >= this.#stopAt) this.#stop = undefined;
      if (offset > 0 && this.#stop === undefined) this.#readFirstAgain();
    }
    this.#fetched.set(offset, page);
    for (let next = this.#fetched.get(this.#nextToStage); next; next = this.#fetched.get(this.#nextToStage)) {
      this.#fetched.delete(this.#nextToStage);
      this.#pending.push({ offset: this.#nextToStage, page: next });
      this.#nextToStage += this.request.limit;
    }
    this.#writeNext();
  }

  /** The end check's read of page 0, beside the last pages, with a permit left; a failure leaves it to the end check. */
  #readFirstAgain(): void {
    const grantedAt = this.#takePermit();
    if (grantedAt === undefined) return;
    const read = this.#get(0)
      .then(
        (page) => void (this.#firstAgain = summaryOf(0, page)),
        () => undefined,
      )
      .finally(() => this.#inFlight.delete(read));
    this.#inFlight.add(read);
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
      throw error;
    }
  }

  /**
   * Stages the pages fetched so far as one chunk, unless a write is in flight (they join the next one) or, but at
   * the end of the run, they are fewer than the requests it sends at once (a chunk per round keeps reads few).
   */
  #writeNext(last = false): void {
    if (this.#writing !== undefined || this.#pending.length === 0 || this.signal.aborted) return;
    if (!last && this.#pending.length < Math.min(this.#width, MAX_CHUNK_PAGES)) return;
    if (this.#writeFailure !== undefined) return;
    const pages = this.#pending.filter(({ offset }) => offset < this.#stopAt);
    this.#pending = [];
    if (pages.length === 0) return;
    const chunk = { runOffset: this.request.offset, attempt: this.request.attempt };
    const rows = pages.map(({ offset, page }) => ({ offset, rows: page.visitors }));
    this.#writing = this.#writeChunk(chunk, rows)
      .then(
        () => {
          for (const { offset, page } of pages)
            this.#staged.push(this.#summaries.get(offset) ?? summaryOf(offset, page));
          this.#beat();
        },
        (error: unknown) => {
          const offset = pages[0]?.offset ?? this.request.offset;
          this.#writeFailure = { offset, error };
          this.#stopAt = Math.min(this.#stopAt, offset);
        },
      )
      .finally(() => {
        this.#writing = undefined;
        this.#writeNext();
      });
  }

  async #writeChunk(chunk: ChunkWriter, rows: StagedPageRows[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.staging.writeChunk(chunk, rows, this.signal);
      } catch (error) {
        if (isPermanent(error)) throw error;
        if (attempt === CHUNK_WRITE_ATTEMPTS) {
          // The error's name or code only: an S3 error's message may echo the access key id.
          const { code, name } = error as NodeJS.ErrnoException;
          throw destinationUnavailable(
            `${this.staging.directory}: ${attempt} writes of a staged chunk failed, the last with ${code ?? name}`,
          );
        }
        await sleep(1000 * 2 ** (attempt - 1), undefined, { signal: this.signal }).catch(() => {
          throw error;
        });
      }
    }
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

/**
 * The run's stop; a 429 elsewhere in the run (`limited`) makes it a refusal the limiter hears of (`rateLimited`,
 * with the refused request's grant; else the grant of the stop's permit). `type`: the failure's (the workflow
 * counts malformed answers).
 */
function describe({ offset, error, grantedAt = 0 }: RunStop, limited?: RunStop) {
  const refusal = limited ?? (isRateLimited(error) ? { offset, error, grantedAt } : undefined);
  const retryAfterOf = refusal?.error ?? error;
  const retryAfterMs =
    retryAfterOf instanceof ApplicationFailure
      ? docsApiDetailsOf(retryAfterOf.details)?.retryAfterMs
      : undefined;
  return {
    offset,
    grantedAt: refusal?.grantedAt ?? grantedAt,
    rateLimited: refusal !== undefined,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    message: error instanceof Error ? error.message : String(error),
    ...(error instanceof ApplicationFailure && error.type ? { type: error.type } : {}),
  };
}

function summaryOf(offset: number, page: VisitorsPage): PageSummary {
  const digest = createHash('sha256').update(JSON.stringify(page.visitors)).digest('hex').slice(0, 16);
  return { offset, rows: page.visitors.length, hasMore: page.hasMore, totals: page.totals, digest };
}

function isRateLimited(error: unknown): boolean {
  return error instanceof ApplicationFailure && error.type === DocsApiFailureType.rateLimited;
}
