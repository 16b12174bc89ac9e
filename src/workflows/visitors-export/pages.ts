import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';
import type {
  PageRequest,
  PageRunProgress,
  PageRunResult,
  PermitSpan,
} from '../../activities/visitors-pages';
import { MAX_PERMITS_PER_ASK, type BudgetRefusal, type PermitGrant } from '../../contract/budget';
import { DocsApiFailureType, docsApiDetailsOf } from '../../contract/failure-types';
import type { PageSummary } from '../../contract/visitors-export';
import { VisitorsExportFailureType } from '../../contract/visitors-export-constants';
import { refusalOf, type BudgetPermits } from '../budget/permits';

/**
 * A run of pages: one attempt (the workflow retries its pages with permits of their own). A dead worker is noticed
 * after 15 s; a cancelled run is awaited, to say how many permits it spent.
 */
const { fetchVisitorsPages } = proxyActivities<ReturnType<typeof createVisitorsExportActivities>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** Failures other than 429 a page survives (5xx, network, a worker lost mid-request). */
const MAX_PAGE_FAILURES = 20;
/** Malformed answers (a 2xx that is not the documented page) a page gets before it fails: asking again rarely helps. */
const MAX_MALFORMED_ANSWERS = 3;
const MAX_BACKOFF_MS = 30_000;
/** A run lasts about this long at the pace of the last one: progress moves, permits stay fresh. */
const RUN_TARGET_MS = 2_000;

/**
 * `end`: the last page is counted; `pastEnd`, the page after it and `firstAgain`, page 0 read again beside the
 * last pages, when they came back. `paused`: stopped before a new run (continue-as-new is due).
 */
export type PagesOutcome =
  { kind: 'end'; last: PageSummary; pastEnd?: PageSummary; firstAgain?: PageSummary } | { kind: 'paused' };

export interface PagesOptions {
  /** Offset of the first page to fetch (0, or where a previous run stopped). */
  firstOffset: number;
  pageSize: number;
  concurrency: number;
  permits: BudgetPermits;
  request(offset: number): PageRequest;
  /** Asked before each run but the first: true stops (continue-as-new is due). */
  shouldPause(): boolean;
  /** Every page the export needs, in offset order, up to and including the last one. */
  onPage(page: PageSummary): void;
  /** Before a run (its width) and after its pages are counted (0): progress display. */
  onInFlight(requests: number): void;
}

/**
 * The pages from `firstOffset` up to the first whose hasMore is false, one run after another. The first page goes
 * alone (it tells whether there is more); while the budget binds, a run is one page, so an export sends nothing
 * past its end; while it has room for a run as wide as the concurrency (and for the requests that may land past
 * the end), a run takes every lane over about RUN_TARGET_MS of pages at the last run's pace, at most one ask's
 * worth, and the run that meets the end sends at most `concurrency - 1` requests past it.
 */
export async function fetchPages(options: PagesOptions): Promise<PagesOutcome> {
  const { firstOffset, pageSize, concurrency, permits } = options;
  // The first ask takes what the budget can spare; what the export does not spend goes back at its end.
  permits.aimAt(MAX_PERMITS_PER_ASK);
  let requestMs: number | undefined;
  for (let offset = firstOffset; ;) {
    if (offset > firstOffset && options.shouldPause()) return { kind: 'paused' };
    const room = offset > firstOffset && permits.room >= 2 * concurrency;
    let pages = 1;
    if (room) {
      // As many as the stock holds when that is a run's worth: a run short of permits would end in a second one.
      const inHand = permits.inStock >= concurrency ? permits.inStock : permits.room - concurrency;
      const paced =
        requestMs === undefined
          ? concurrency
          : Math.floor((RUN_TARGET_MS * concurrency) / Math.max(1, requestMs));
      pages = Math.max(concurrency, Math.min(MAX_PERMITS_PER_ASK, paced, inHand));
      // This run's permits and the next one's.
      permits.aimAt(2 * pages);
    }
    const width = Math.min(pages, concurrency);
    options.onInFlight(width);
    const startedAt = Date.now();
    const run = await fetchPageRun(permits, options.request(offset), {
      pages,
      width,
      shouldPause: () => options.shouldPause(),
    });
    requestMs = ((Date.now() - startedAt) * width) / run.pages.length;
    for (const page of run.pages) options.onPage(page);
    options.onInFlight(0);
    offset += run.pages.length * pageSize;
    const last = run.pages.at(-1) as PageSummary;
    if (!last.hasMore) {
      const { pages: _, ...ends } = run;
      return { kind: 'end', last, ...ends };
    }
  }
}

/**
 * `pages` consecutive pages from `request.offset` up to the last page, `width` requests at a time: activities
 * (fetchVisitorsPages) paid with permits from the export's stock, the unused ones put back. A call that stopped
 * early is followed by one from the first page not counted (a dead worker's pages count up to its last
 * heartbeat). A 429 goes to the limiter with the next ask and costs no attempt; other failures are retried with
 * backoff (or Retry-After) up to MAX_PAGE_FAILURES (MAX_MALFORMED_ANSWERS malformed answers); one no retry can
 * help fails with VisitorsExportPageFailed naming the offset. `firstAttempt` names the chunks (re-reads). Between
 * two activities of a run (one the budget narrowed to a page an activity takes hundreds) it stops early when
 * `shouldPause` says so, unless a 429 waits to be reported with its next ask: history stays bounded.
 */
export async function fetchPageRun(
  permits: BudgetPermits,
  request: PageRequest,
  run: { pages: number; width?: number; firstAttempt?: number; shouldPause?: () => boolean },
): Promise<Omit<PageRunResult, 'permitsUsed' | 'stopped'>> {
  const { pages, width = 1, firstAttempt = 1 } = run;
  const done: PageSummary[] = [];
  let refusal: BudgetRefusal | undefined;
  const failures = { any: 0, malformed: 0 };
  let attempt = firstAttempt - 1;
  for (let offset = request.offset; done.length < pages;) {
    if (done.length > 0 && refusal === undefined && run.shouldPause?.() === true) break;
    const taken = await permits.take(pages - done.length, refusal);
    refusal = undefined;
    attempt += 1;
    let result: PageRunResult;
    try {
      const shape = { offset, permits: spansOf(taken), attempt, ...(width > 1 ? { width } : {}) };
      result = await fetchVisitorsPages({ ...request, ...shape });
    } catch (error) {
      if (isCancellation(error)) {
        permits.putBack(taken.slice(permitsUsedBefore(error) ?? 0));
        throw error;
      }
      // Its permits count as spent: what it sent is unknown. The pages its last heartbeat reported are done.
      result = { pages: pagesReported(error, offset, request.limit), permitsUsed: taken.length };
      if (result.pages.length === 0) {
        refusal = refusalOf(error, taken[0] as PermitGrant);
        if (refusal === undefined) await afterFailure(offset, error, failures);
        continue;
      }
    }
    permits.putBack(taken.slice(result.permitsUsed));
    done.push(...result.pages);
    if (done.at(-1)?.hasMore === false) {
      const { permitsUsed: _, stopped: _stopped, ...ends } = result;
      return { ...ends, pages: done };
    }
    if (result.pages.length > 0) {
      offset += result.pages.length * request.limit;
      attempt = firstAttempt - 1;
      failures.malformed = 0;
    }
    const stop = result.stopped;
    if (stop?.type === DocsApiFailureType.malformedResponse) failures.malformed += 1;
    if (stop?.rateLimited === true) {
      const { retryAfterMs } = stop;
      refusal = { grantedAt: stop.grantedAt, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    } else if (stop?.retryAfterMs !== undefined) {
      await sleep(stop.retryAfterMs);
    }
  }
  return { pages: done };
}

/** A page the export needs failed for good: names the offset, keeps the service's error as the cause. */
function pageFailed(offset: number, error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return ApplicationFailure.create({
    message: `visitors page at offset ${offset} failed: ${message}`,
    type: VisitorsExportFailureType.pageFailed,
    nonRetryable: true,
    ...(cause instanceof Error ? { cause } : {}),
  });
}

/** Fails the run when the page's failure is for good; otherwise waits before the next try. */
async function afterFailure(
  offset: number,
  error: unknown,
  failures: { any: number; malformed: number },
): Promise<void> {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const failure = cause instanceof ApplicationFailure ? cause : undefined;
  failures.any += 1;
  if (failure?.type === DocsApiFailureType.malformedResponse) failures.malformed += 1;
  if (
    failure?.nonRetryable ||
    failures.any >= MAX_PAGE_FAILURES ||
    failures.malformed >= MAX_MALFORMED_ANSWERS
  ) {
    throw pageFailed(offset, error);
  }
  const retryAfterMs = docsApiDetailsOf(failure?.details)?.retryAfterMs;
  await sleep(retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures.any - 1)));
}

/**
 * What a cancelled run reported it spent (its details' permitsUsed). A started run always reports it, so a
 * cancellation without it is of a run that never started: it sent nothing, and every permit goes back.
 */
function permitsUsedBefore(error: unknown): number | undefined {
  const cancelled = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cancelled instanceof CancelledFailure)) return undefined;
  const used = (cancelled.details[0] as { permitsUsed?: unknown } | null | undefined)?.permitsUsed;
  return typeof used === 'number' && Number.isInteger(used) && used >= 0 ? used : undefined;
}

/** The pages a run whose worker died reported in its last heartbeat (PageRunProgress), from `offset` on. */
function pagesReported(error: unknown, offset: number, limit: number): PageSummary[] {
  const timeout = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(timeout instanceof TimeoutFailure)) return [];
  const pages = (timeout.lastHeartbeatDetails as Partial<PageRunProgress> | undefined)?.pages;
  if (!Array.isArray(pages)) return [];
  const reported: PageSummary[] = [];
  for (const page of pages) {
    if (page?.offset !== offset + reported.length * limit) break;
    reported.push(page);
  }
  return reported;
}

/** The permits as runs of one grant each (they come in batches): a short activity input. */
function spansOf(permits: readonly PermitGrant[]): PermitSpan[] {
  const spans: PermitSpan[] = [];
  for (const permit of permits) {
    const spendBy = permit.spendBy ?? Number.MAX_SAFE_INTEGER;
    const last = spans.at(-1);
    if (last !== undefined && last.grantedAt === permit.grantedAt && last.spendBy === spendBy)
      last.count += 1;
    else spans.push({ count: 1, grantedAt: permit.grantedAt, spendBy });
  }
  return spans;
}
