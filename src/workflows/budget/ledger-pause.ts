import type { BudgetRefusal } from '../../contract/budget';
import type { LedgerSnapshot } from './ledger-snapshot';

const FIRST_BACKOFF_MS = 2_000;

/**
 * The service refused a request spent on a permit: every user of the budget pauses, for its Retry-After or a
 * doubling backoff capped at the window, and stays cautious (grants spaced evenly) for a window after.
 */
export function pauseAfterRefusal(s: LedgerSnapshot, refusal: BudgetRefusal, now: number): void {
  s.refusals += 1;
  const sentBeforePause = refusal.grantedAt < s.pauseStartedAt;
  // A request already in flight when the pause began adds nothing the pause does not know.
  if (sentBeforePause && refusal.retryAfterMs === undefined && s.pausedUntil > now) return;
  let pauseMs: number;
  if (refusal.retryAfterMs !== undefined) {
    pauseMs = refusal.retryAfterMs;
  } else {
    if (now - s.lastRefusalAt > s.budget.windowMs + s.streak * FIRST_BACKOFF_MS) s.streak = 0;
    if (!sentBeforePause) s.streak += 1;
    pauseMs = Math.min(s.budget.windowMs, FIRST_BACKOFF_MS * 2 ** Math.max(0, s.streak - 1));
  }
  s.lastRefusalAt = now;
  if (now + pauseMs > s.pausedUntil) {
    if (s.pausedUntil <= now) s.pauseStartedAt = now;
    s.pausedUntil = now + pauseMs;
  }
  s.cautiousUntil = Math.max(s.cautiousUntil, s.pausedUntil + s.budget.windowMs);
}
