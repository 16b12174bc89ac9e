import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { createBudgetActivities } from '../../activities/budget';
import { recordPermitWait } from '../metrics';
import { DocsApiFailureType, docsApiDetailsOf } from '../../contract/failure-types';
import {
  BudgetFailureType,
  budgetPermitGrantedSignal,
  budgetPermitQueuedSignal,
  type BudgetKind,
  type BudgetRefusal,
  type PermitGrant,
} from '../../contract/budget';

type BudgetActivities = ReturnType<typeof createBudgetActivities>;

/** Asking is cheap and safe to repeat (the limiter ignores a repeated permit id): retried until it gets through. */
const { requestBudgetPermit } = proxyLocalActivities<BudgetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * A release is bounded: a limiter that is gone answers at once (nothing to release), and a Temporal that does
 * not answer is given up after about a minute, with a warning. The permit then frees itself (the limiter's hold
 * timeout, or its window), so the workflow never waits on it.
 */
const { releaseBudgetPermits } = proxyLocalActivities<BudgetActivities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
  },
});

/**
 * The same ask as a regular activity: it costs three events instead of one marker, but the workflow task does
 * not stay open while it runs (a local activity holds it, and every page completion waits behind it).
 */
const { requestBudgetPermit: requestBudgetPermitInBackground } = proxyActivities<BudgetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * A permit not granted after this long is asked for again (same permit id: a limiter that has it ignores the
 * repeat). A limiter terminated while the permit waited is then started again, so no wait lasts for ever.
 */
const REASK_AFTER_MS = 2 * 60_000;

/** What a workflow asks its budget for: one permit, or with `count` a batch (see PermitRequest.count). */
export interface PermitAsk {
  projectId: string;
  /** Order within the project; default now. */
  requestedAt?: number;
  /** One at a time per budget (creates and messages: the service sees them in order); release after use. */
  exclusive?: boolean;
  /** See PermitRequest.settleMs. */
  settleMs?: number;
  /** The previous permit's request was refused with 429: the limiter pauses everyone. */
  refusal?: BudgetRefusal;
  /** Give up (non-retryable BudgetWaitTimedOut) when no grant came by then. */
  deadlineAt: number;
  /** See PermitRequest.count: up to this many permits, the grant tells how many and the spare. */
  count?: number;
  /** Ask through a regular activity: the workflow goes on handling other events while the ask is sent. */
  background?: boolean;
  /**
   * The deadline has passed, by a timer the caller keeps for all its asks: this ask then starts none of its own
   * (a timer costs two events per ask).
   */
  deadlinePassed?: () => boolean;
  /** The permit's id, for a caller that may withdraw the ask (release it before its grant); default a new one. */
  permitId?: string;
}

/**
 * A workflow's side of a budget: asks the budget's limiter workflow for a permit and waits for the grant signal.
 * The wait is a workflow condition, not an activity: it can last hours and counts against no attempt limit.
 */
export class BudgetPermits {
  readonly #granted = new Map<string, PermitGrant>();
  /** Permits asked for and not granted yet, with the limiter's estimate once it sent one. */
  readonly #waits = new Map<string, number | null>();

  constructor(
    private readonly kind: BudgetKind,
    private readonly onWaitChange: () => void = () => undefined,
  ) {
    setHandler(budgetPermitGrantedSignal, (grant) => {
      this.#granted.set(grant.permitId, grant);
    });
    setHandler(budgetPermitQueuedSignal, ({ permitId, estimatedGrantAt }) => {
      if (!this.#waits.has(permitId)) return;
      this.#waits.set(permitId, estimatedGrantAt);
      this.onWaitChange();
    });
  }

  /** The limiter's latest estimate among this workflow's waiting permits; null when none waits. */
  get waitingUntil(): number | null {
    const estimates = [...this.#waits.values()].filter((at): at is number => at !== null);
    return estimates.length === 0 ? null : Math.max(...estimates);
  }

  async acquire(ask: PermitAsk): Promise<PermitGrant> {
    const permitId = ask.permitId ?? uuid4();
    const askedAt = Date.now();
    try {
      this.#waits.set(permitId, null);
      const request = {
        kind: this.kind,
        projectId: ask.projectId,
        permitId,
        requestedAt: ask.requestedAt ?? Date.now(),
        ...(ask.exclusive === undefined ? {} : { exclusive: ask.exclusive }),
        ...(ask.settleMs === undefined ? {} : { settleMs: ask.settleMs }),
        ...(ask.refusal === undefined ? {} : { refusal: ask.refusal }),
        ...(ask.count === undefined ? {} : { count: ask.count }),
      };
      if (ask.background === true) {
        // The grant often comes before the ask's own completion: it is all the ask waits for.
        await Promise.race([
          requestBudgetPermitInBackground(request),
          condition(() => this.#granted.has(permitId)),
        ]);
      } else {
        await requestBudgetPermit(request);
      }
      const { deadlinePassed } = ask;
      if (deadlinePassed && !this.#granted.has(permitId)) {
        // The caller's timer bounds every ask it makes (and its own asks are re-sent by its own pacing).
        await condition(() => this.#granted.has(permitId) || deadlinePassed());
      }
      while (!this.#granted.has(permitId)) {
        if (deadlinePassed?.() === true || Date.now() >= ask.deadlineAt) throw this.timedOut(ask);
        const waitMs = Math.min(REASK_AFTER_MS, Math.max(1, ask.deadlineAt - Date.now()));
        await condition(() => this.#granted.has(permitId), waitMs);
        if (!this.#granted.has(permitId) && Date.now() < ask.deadlineAt) await requestBudgetPermit(request);
      }
    } catch (error) {
      // Cancelled while the permit waited: withdrawn, its grant would go to a run that may have ended by then (a
      // failed signal in the limiter's history), and an exclusive one would hold the budget until its timeout.
      if (isCancellation(error)) {
        await CancellationScope.nonCancellable(() => this.release(ask.projectId, { permitId }));
      }
      throw error;
    } finally {
      const hadEstimate = this.#waits.get(permitId) != null;
      this.#waits.delete(permitId);
      if (hadEstimate) this.onWaitChange();
    }
    const grant = this.#granted.get(permitId) ?? { permitId, grantedAt: Date.now() };
    this.#granted.delete(permitId);
    recordPermitWait(this.kind, Date.now() - askedAt);
    return grant;
  }

  /** The failure of an ask that got no grant before its deadline. */
  timedOut(ask: Pick<PermitAsk, 'projectId' | 'deadlineAt'>): ApplicationFailure {
    return ApplicationFailure.create({
      type: BudgetFailureType.waitTimedOut,
      nonRetryable: true,
      message: `no ${this.kind} budget for project ${ask.projectId} before the deadline ${new Date(ask.deadlineAt).toISOString()}`,
    });
  }

  /**
   * Gives permits back: an exclusive permit whose request is done (`permitId`: the next one may go), or permits
   * granted and never spent (`unspent`: their places in the window are free again). Bounded: a limiter that is
   * gone, or that cannot be reached in about a minute, is given up with a warning; the permit frees itself.
   */
  async release(
    projectId: string,
    release: { permitId?: string; unspent?: { grantedAt: number; count: number }[] },
  ): Promise<void> {
    if (release.permitId === undefined && (release.unspent?.length ?? 0) === 0) return;
    try {
      const outcome = await releaseBudgetPermits({
        kind: this.kind,
        projectId,
        releaseId: uuid4(),
        ...release,
      });
      if (outcome === 'limiter-gone') {
        log.warn('Budget limiter gone: nothing to release', { kind: this.kind, projectId });
      }
    } catch (error) {
      if (isCancellation(error)) throw error;
      log.warn('Permit release given up: the limiter frees it after its hold timeout', {
        kind: this.kind,
        projectId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** The refusal to report when an activity failed with the service's 429; undefined for any other failure. */
export function refusalOf(error: unknown, permit: PermitGrant): BudgetRefusal | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  if (cause.type !== DocsApiFailureType.rateLimited) return undefined;
  const retryAfterMs = docsApiDetailsOf(cause.details)?.retryAfterMs;
  return { grantedAt: permit.grantedAt, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/** "14:05:09 UTC": what an operator reads in the UI and in queries. */
export function clockTime(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(11, 19)} UTC`;
}
