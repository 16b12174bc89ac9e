import type { PermitRequest, RateBudget } from '../../contract/budget';

/** What a limiter carries across continue-as-new. */
export interface LedgerSnapshot {
  budget: RateBudget;
  /** Grant times, oldest first, still inside the (padded) window. */
  grants: number[];
  /** Waiting permits per project, FIFO; the array order is the round-robin turn. */
  queues: [string, PermitRequest[]][];
  pausedUntil: number;
  pauseStartedAt: number;
  /** Refusals without Retry-After in a row: the backoff doubles with each. */
  streak: number;
  lastRefusalAt: number;
  /** After a refusal, grants are spread evenly (no burst) until this time. */
  cautiousUntil: number;
  /** The exclusive permit in use; `grantedAt` finds its place in `grants` when it is released. */
  exclusive: { permitId: string; until: number; grantedAt?: number } | null;
  refusals: number;
  granted: number;
  /** Recently granted permit ids: a request repeated by a retried ask is not granted twice. */
  recent: string[];
  /** The last time a permit had to wait for the budget (full, paused): the budget binds for a window after. */
  shortAt?: number;
  /** Permits that waited for the budget are still queued: until they are granted, the budget stays short. */
  backlog?: boolean;
  /** Requesters granted a permit in the window, with their last grant time: they share the spare. */
  requesters?: [string, number][];
}

/** The book of a budget nobody has spent yet. */
export function emptyLedger(budget: RateBudget): LedgerSnapshot {
  return {
    budget,
    grants: [],
    queues: [],
    pausedUntil: 0,
    pauseStartedAt: 0,
    streak: 0,
    lastRefusalAt: 0,
    cautiousUntil: 0,
    exclusive: null,
    refusals: 0,
    granted: 0,
    recent: [],
  };
}
