import { ActivityFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import type { PageRequest, PageSummary } from '../../activities/visitors-export';
import type { PageBlockFailure, PermitSpan } from '../../activities/visitors-page-block';
import type { PermitGrant } from '../../contract/budget';
import { fetchVisitorsPageBlock } from './activity-proxies';
import { fetchPageWithinBudget } from './budgeted-page';
import { pageFailed } from './failures';
import type { PagePermits } from './page-permits';

/**
 * Up to `maxPages` consecutive pages from `request.offset` in one activity (fetchVisitorsPageBlock), paid for
 * with permits from the export's stock (the next block's, up to `nextMaxPages`, are asked for meanwhile); the
 * permits it did not use go back. Its failed pages are fetched again
 * one at a time under the page's own rules (fetchPageWithinBudget). Returns the pages in offset order, at least
 * one, up to the last page of the data when the block reached it (and possibly past it, when a retried page
 * turned out to be the last: the caller stops at the first that ends the data).
 */
export async function fetchPageBlock(
  permits: PagePermits,
  request: PageRequest,
  maxPages: number,
  nextMaxPages: number,
  concurrency: number,
): Promise<PageSummary[]> {
  const taken = await permits.takeUpTo(maxPages, nextMaxPages);
  let result;
  try {
    result = await fetchVisitorsPageBlock({ ...request, permits: spansOf(taken), concurrency });
  } catch (error) {
    if (isCancellation(error)) throw error;
    // The block failed whole (its worker died, say): what it sent is unknown, so its permits count as spent.
    // The pages its last heartbeat reported are done; the next one is fetched alone, the next block goes on.
    const done = pagesReported(error, request);
    const offset = request.offset + done.length * request.limit;
    const last = done.at(-1);
    if (last !== undefined && (!last.hasMore || last.rows === 0)) return done;
    return [...done, await fetchAlone(permits, { ...request, offset })];
  }
  permits.putBack(taken.slice(result.permitsUsed));
  const fetched = new Map(result.pages.map((page) => [page.offset, page]));
  const failed = new Map(result.failed.map((failure) => [failure.offset, failure]));
  const pages: PageSummary[] = [];
  for (let index = 0; index < Math.max(1, fetched.size + failed.size); index++) {
    const offset = request.offset + index * request.limit;
    pages.push(
      fetched.get(offset) ?? (await fetchAlone(permits, { ...request, offset }, failed.get(offset))),
    );
  }
  return pages;
}

/** One page under the page's rules; its failure for good names its offset (as the page window's does). */
async function fetchAlone(
  permits: PagePermits,
  request: PageRequest,
  failure?: PageBlockFailure,
): Promise<PageSummary> {
  const earlier =
    failure === undefined
      ? undefined
      : {
          ...(failure.rateLimited
            ? {
                refusal: {
                  grantedAt: failure.grantedAt,
                  ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
                },
              }
            : {}),
          ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
        };
  try {
    return await fetchPageWithinBudget((refusal) => permits.take(refusal), request, earlier);
  } catch (error) {
    if (isCancellation(error)) throw error;
    throw pageFailed(request.offset, error);
  }
}

/** The pages a block that timed out reported in its last heartbeat (PageBlockProgress), checked. */
function pagesReported(error: unknown, request: PageRequest): PageSummary[] {
  const timeout = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(timeout instanceof TimeoutFailure)) return [];
  const progress: unknown = timeout.lastHeartbeatDetails;
  const pages: unknown =
    typeof progress === 'object' && progress !== null && 'pages' in progress ? progress.pages : [];
  if (!Array.isArray(pages)) return [];
  const reported: PageSummary[] = [];
  for (const page of pages as unknown[]) {
    if (!isPageSummary(page) || page.offset !== request.offset + reported.length * request.limit) break;
    reported.push(page);
  }
  return reported;
}

function isPageSummary(value: unknown): value is PageSummary {
  if (typeof value !== 'object' || value === null) return false;
  const page = value as Partial<Record<keyof PageSummary, unknown>>;
  const totals = page.totals as Partial<Record<'human' | 'ai' | 'total', unknown>> | null | undefined;
  return (
    typeof page.offset === 'number' &&
    typeof page.rows === 'number' &&
    typeof page.hasMore === 'boolean' &&
    typeof totals?.human === 'number' &&
    typeof totals.ai === 'number' &&
    typeof totals.total === 'number'
  );
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
