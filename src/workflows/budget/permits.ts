import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { createBudgetActivities } from '../../activities/budget';
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
const { requestBudgetPermit, releaseBudgetPermit, returnBudgetPermits } =
  proxyLocalActivities<BudgetActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });

/**
 * The same ask as a regular activity: it costs three events instead of one marker, but the workflow task does
 * not stay open while it runs (a local activity holds it, and every page completion waits behind it).
 */
const { requestBudgetPermit: requestBudgetPermitInBackground } = proxyActivities<BudgetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** One permit, or with `count` a batch of them (see PermitRequest.count). */
export type Permit = PermitGrant;

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

  async acquire(ask: PermitAsk): Promise<Permit> {
    const permitId = uuid4();
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
      if (!this.#granted.has(permitId)) {
        const { deadlinePassed } = ask;
        if (deadlinePassed) {
          await condition(() => this.#granted.has(permitId) || deadlinePassed());
        } else {
          await condition(() => this.#granted.has(permitId), Math.max(1, ask.deadlineAt - Date.now()));
        }
        if (!this.#granted.has(permitId)) throw this.timedOut(ask);
      }
    } finally {
      const hadEstimate = this.#waits.get(permitId) != null;
      this.#waits.delete(permitId);
      if (hadEstimate) this.onWaitChange();
    }
    const grant = this.#granted.get(permitId) ?? { permitId, grantedAt: Date.now() };
    this.#granted.delete(permitId);
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

  /** Permits granted and never spent (none will be): the budget may grant their places again. */
  async giveBack(projectId: string, grants: { grantedAt: number; count: number }[]): Promise<void> {
    if (grants.length === 0) return;
    await returnBudgetPermits({ kind: this.kind, projectId, returnId: uuid4(), grants });
  }

  /** After an exclusive permit's request: lets the next one of the budget go. */
  async release(projectId: string, permit: Permit): Promise<void> {
    await releaseBudgetPermit({ kind: this.kind, projectId, permitId: permit.permitId });
  }
}

/** The refusal to report when an activity failed with the service's 429; undefined for any other failure. */
export function refusalOf(error: unknown, permit: Permit): BudgetRefusal | undefined {
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
