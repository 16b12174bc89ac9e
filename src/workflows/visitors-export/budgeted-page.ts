import { ActivityFailure, ApplicationFailure, isCancellation, sleep } from '@temporalio/workflow';
import type { PageRequest, PageSummary } from '../../activities/visitors-export';
import { docsApiDetailsOf } from '../../contract/failure-types';
import type { BudgetRefusal } from '../../contract/budget';
import type { PermitGrant } from '../../contract/budget';
import { refusalOf } from '../budget/permits';
import { fetchVisitorsPageOnce } from './activity-proxies';

/** Failures other than 429 a page survives (5xx, network, a worker lost mid-request), as before budgets. */
const MAX_PAGE_FAILURES = 20;
const MAX_BACKOFF_MS = 30_000;

/**
 * One page within the analytics budget: a permit per request, retried by the workflow (each retry is another
 * request, so another permit). A 429 is reported to the limiter with the next ask, which pauses every user of
 * the budget, and counts against no attempt limit: the page waits as long as the deadline allows.
 */
export async function fetchPageWithinBudget(
  takePermit: (refusal: BudgetRefusal | undefined) => Promise<PermitGrant>,
  request: PageRequest,
  earlier?: EarlierFailure,
): Promise<PageSummary> {
  let refusal = earlier?.refusal;
  if (refusal === undefined && earlier?.retryAfterMs !== undefined) await sleep(earlier.retryAfterMs);
  for (let failures = earlier === undefined ? 0 : 1; ;) {
    const permit = await takePermit(refusal);
    try {
      return await fetchVisitorsPageOnce(request);
    } catch (error) {
      if (isCancellation(error)) throw error;
      refusal = refusalOf(error, permit);
      if (refusal !== undefined) continue;
      failures += 1;
      const failure = error instanceof ActivityFailure ? error.cause : error;
      if ((failure instanceof ApplicationFailure && failure.nonRetryable) || failures >= MAX_PAGE_FAILURES) {
        throw error;
      }
      await sleep(retryAfterMsOf(failure) ?? Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1)));
    }
  }
}

/** The page's request failed once already (in a block of pages): it counts, and its 429 or Retry-After holds. */
export interface EarlierFailure {
  refusal?: BudgetRefusal;
  retryAfterMs?: number;
}

/** A 503's Retry-After, carried in the failure's details. */
function retryAfterMsOf(failure: unknown): number | undefined {
  if (!(failure instanceof ApplicationFailure)) return undefined;
  return docsApiDetailsOf(failure.details)?.retryAfterMs;
}
