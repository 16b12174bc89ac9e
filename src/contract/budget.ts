import { defineQuery, defineSignal } from '@temporalio/workflow';
import { parseDuration } from './duration';

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

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000 };

/** `100/1h`: a budget as DOCS_API_*_RATE_LIMIT writes it (parseRateLimit reads it back). */
export function rateLimitText({ requests, windowMs }: RateBudget): string {
  const [unit, ms] = Object.entries(UNIT_MS).find(([, size]) => windowMs % size === 0) ?? ['ms', 1];
  return `${requests}/${windowMs / ms}${unit}`;
}

/**
 * What the UI says a limiter is (its static summary, and the first line of its current details, which a
 * continued run sets again): which budget, from its workflow id, and its limit.
 */
export function budgetLimiterSummary(workflowId: string, budget: RateBudget): string {
  const [, kind, , ...project] = workflowId.split('/');
  const which =
    kind === 'agent'
      ? `Agent budget of project ${project.join('/')} (creates and messages)`
      : "Analytics budget of the organization (every export's pages)";
  return `${which}: ${rateLimitText(budget)}`;
}

/** ApplicationFailure types of the budgets. */
export const BudgetFailureType = {
  /** No grant came before the requester's deadline (non-retryable): the job or export ends. */
  waitTimedOut: 'BudgetWaitTimedOut',
} as const;

/** The service refused a request spent on a permit: everyone waits. */
export interface BudgetRefusal {
  /** From Retry-After; absent: the limiter backs off on its own. */
  retryAfterMs?: number;
  /** When the refused request's permit was granted (refusals of requests sent before a pause do not lengthen it). */
  grantedAt: number;
}

export interface PermitRequest {
  permitId: string;
  /** Workflow id the grant is signalled to. */
  requesterId: string;
  /**
   * The run of `requesterId` that asked: the grant goes to that run only, so a run that closed (cancelled,
   * terminated) never hands its permit to a new run of the same workflow id; the grant's places are freed.
   */
  requesterRunId?: string;
  /** Requests of one project wait in order; projects take turns. */
  projectId: string;
  /** Order within the project (e.g. the workflow's start time), then arrival. */
  requestedAt: number;
  budget: RateBudget;
  /** One at a time: the next permit of this budget waits for its release (or a hold timeout). */
  exclusive?: boolean;
  /**
   * Not granted before `requestedAt + settleMs`, so that a request made a moment earlier whose ask is still on
   * its way (a slower first workflow task) is queued ahead of this one: creates, ordered by workflow start.
   */
  settleMs?: number;
  refusal?: BudgetRefusal;
  /**
   * Up to this many permits (default 1, at most MAX_PERMITS_PER_ASK). The first waits its turn like any permit;
   * the others come with it only from the window's spare (see PermitGrant.spare). A requester that sets it, even
   * to 1, is told `count`, `spare` and `spendBy` in the grant.
   */
  count?: number;
}

/** The most permits one ask may take: an export's block of pages (about two seconds of them) and the next. */
export const MAX_PERMITS_PER_ASK = 256;

/** Sent to a requester whose permit must wait: the limiter's estimate, for progress and the UI. */
export interface PermitTicket {
  permitId: string;
  estimatedGrantAt: number;
  /** Permits waiting before this one, across projects. */
  waitingAhead: number;
}

export interface PermitGrant {
  permitId: string;
  grantedAt: number;
  /** Permits granted with this id (only when the request set `count`): each spends one request. */
  count?: number;
  /**
   * The budget's room per requester after this grant: the window's free permits less those waiting, shared among
   * the requesters granted one in the window; 0 for a window after the budget ran short (a permit waited), and
   * while paused or cautious after a refusal.
   */
  spare?: number;
  /** A permit not spent by then is dropped (it would land too late for the window padding to cover it). */
  spendBy?: number;
}

/** As of the limiter's last task (a query does not move workflow time). */
export interface BudgetLimiterState {
  budget: RateBudget;
  /** Grants inside the window. */
  grantedInWindow: number;
  waitingByProject: Record<string, number>;
  pausedUntil: number | null;
  refusals: number;
  granted: number;
}

/**
 * Ask for a permit (signal-with-start: a signal, unlike an update, has no cap on how many may be in flight).
 * Granted by `budgetPermitGrantedSignal`; a permit that must wait first gets `budgetPermitQueuedSignal`.
 */
export const requestBudgetPermitSignal = defineSignal<[PermitRequest]>('requestBudgetPermit');
export const budgetPermitQueuedSignal = defineSignal<[PermitTicket]>('budgetPermitQueued');
/**
 * Permits given back to the budget: the one verb for it. `permitId`: an exclusive permit whose request is done
 * (sent or failed), so the next one may go. `unspent`: permits granted and never spent (no request was sent with
 * them, and none will be), whose places in the window are free again. `releaseId` makes a repeat count once.
 */
export interface PermitRelease {
  releaseId: string;
  permitId?: string;
  /** Per grant: its time (its place in the window) and how many of its permits come back. */
  unspent?: { grantedAt: number; count: number }[];
}
export const releaseBudgetPermitsSignal = defineSignal<[PermitRelease]>('releaseBudgetPermits');
/** Sent by the limiter to the requester. */
export const budgetPermitGrantedSignal = defineSignal<[PermitGrant]>('budgetPermitGranted');
export const getBudgetStateQuery = defineQuery<BudgetLimiterState>('getBudgetState');
