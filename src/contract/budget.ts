import { defineQuery, defineSignal } from '@temporalio/workflow';
import { parseDuration, UNIT_MS } from './duration';

/** A budget of the service: at most `requests` in any `windowMs`. */
export interface RateBudget {
  requests: number;
  windowMs: number;
}

/** What the service documents for both budgets. */
export const DEFAULT_RATE_LIMIT = '100/1h';

const RATE_LIMIT = /^\s*(\d{1,9})\s*\/\s*(\S.*)$/;

/**
 * Parses `<requests>/<duration>` (`100/1h`, `20/10s`, `5000/1 day`): a positive whole number of requests and a
 * positive duration. Returns undefined when the text is not one.
 */
export function parseRateLimit(text: string): RateBudget | undefined {
  const match = RATE_LIMIT.exec(text);
  if (!match) return undefined;
  const requests = Number(match[1]);
  const windowMs = parseDuration((match[2] ?? '').trim());
  if (!(requests > 0) || windowMs === undefined || !(windowMs >= 1)) return undefined;
  return { requests, windowMs: Math.round(windowMs) };
}

/** analytics: one per organization (key), for every project; agent: one per project, for create and message. */
export type BudgetKind = 'analytics' | 'agent';

/** The limiter workflow's type name. */
export const BUDGET_LIMITER_WORKFLOW_TYPE = 'docsBudgetLimiter';

/**
 * One limiter workflow per budget. `keyId` names the organization without the key (a hash of it, computed by
 * the worker); the agent budget adds the project.
 */
export function budgetLimiterWorkflowId(kind: BudgetKind, keyId: string, projectId?: string): string {
  return kind === 'analytics'
    ? `docs-budget/analytics/${keyId}`
    : `docs-budget/agent/${keyId}/${projectId ?? ''}`;
}

/**
 * What the UI says a limiter is: its static summary (set by whoever starts it) and the first line of its current
 * details: which budget, from its workflow id, and its limit as DOCS_API_*_RATE_LIMIT writes it (`100/1h`).
 */
export function budgetLimiterSummary(workflowId: string, { requests, windowMs }: RateBudget): string {
  const [, kind, , ...project] = workflowId.split('/');
  const which =
    kind === 'agent'
      ? `Agent budget of project ${project.join('/')} (creates and messages)`
      : "Analytics budget of the organization (every export's pages)";
  const [unit, ms] = Object.entries(UNIT_MS).find(([, size]) => windowMs % size === 0) ?? ['ms', 1];
  return `${which}: ${requests}/${windowMs / ms}${unit}`;
}

/** ApplicationFailure types of the budgets. */
export const BudgetFailureType = {
  /** No grant came before the requester's deadline (non-retryable): the job or export ends. */
  waitTimedOut: 'BudgetWaitTimedOut',
} as const;

/** The most permits one ask may take: an export's block of pages (about two seconds of them) and the next. */
export const MAX_PERMITS_PER_ASK = 256;

/** The service refused (429) a request spent on a permit: everyone waits. */
export interface BudgetRefusal {
  /** From Retry-After; absent: the limiter backs off on its own. */
  retryAfterMs?: number;
  /** When the refused request's permit was granted (refusals of requests sent before a pause do not lengthen it). */
  grantedAt: number;
}

/**
 * The ask for permits, by signal-with-start (unlike updates, signals have no cap on how many may be in flight).
 * Asked again with the same `permitId`, it is granted once. Messages change only compatibly: a limiter continued
 * onto a new version still serves the runs pinned to the old one.
 */
export interface PermitAsk {
  permitId: string;
  /** The workflow and run that asked: the grant goes to that run only (a closed run's grant frees its places). */
  requesterId: string;
  requesterRunId: string;
  /** Asks of one project are granted in the order the limiter received them; projects take turns. */
  projectId: string;
  /** The configured budget, added by the worker (workflow code never sees it); the newest one asked with wins. */
  budget: RateBudget;
  /** Up to this many permits (1 to MAX_PERMITS_PER_ASK, default 1): the first waits its turn, the others come
   * with it only from the requester's share of the budget's spare. */
  count?: number;
  /** Held until given back (or a hold timeout): the next exclusive permit of the budget waits for it. */
  exclusive?: boolean;
  /** The requester's previous request was refused: the limiter pauses everyone. */
  refusal?: BudgetRefusal;
}

export interface PermitGrant {
  permitId: string;
  grantedAt: number;
  /** Permits granted (1 + extras from the spare): each spends one request. */
  count: number;
  /**
   * The budget's room per requester after this grant: the window's free permits less those waiting, shared among
   * the requesters granted one in the window; 0 while the budget binds (a permit waited in the last window, a
   * pause after a refusal, grants spread after one) and when the window's padding is too short to hold permits.
   */
  spare: number;
  /** A permit not spent by then is dropped: it would land too late for the window's padding to cover it. */
  spendBy: number;
}

/**
 * The give-back: a permit its requester is done with. Withdrawn if it still waits (an ask still on its way is
 * ignored), the next exclusive permit may go, and `unused` of its permits (never sent, and never to be) free
 * their places in the window. Once per permit: a repeat is ignored.
 */
export interface PermitRelease {
  permitId: string;
  unused?: number;
}

/** Permits given back to the limiter of one budget (the project names the agent budget's limiter). */
export interface BudgetRelease {
  kind: BudgetKind;
  projectId: string;
  releases: PermitRelease[];
}

/** As of the limiter's last task (a query does not move workflow time). */
export interface BudgetLimiterState {
  budget: RateBudget;
  /** Permits granted inside the window. */
  grantedInWindow: number;
  waitingByProject: Record<string, number>;
  pausedUntil: number | null;
  refusals: number;
  granted: number;
}

export const requestBudgetPermitSignal = defineSignal<[PermitAsk]>('requestBudgetPermit');
export const releaseBudgetPermitsSignal = defineSignal<[PermitRelease]>('releaseBudgetPermits');
/** Sent by the limiter to the run that asked: its grant, or first, to an ask that must wait, its estimate. */
export const budgetPermitGrantedSignal = defineSignal<[PermitGrant]>('budgetPermitGranted');
export const budgetPermitQueuedSignal =
  defineSignal<[{ permitId: string; estimatedGrantAt: number }]>('budgetPermitQueued');
export const getBudgetStateQuery = defineQuery<BudgetLimiterState>('getBudgetState');
