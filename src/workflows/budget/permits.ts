import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyLocalActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { recordPermitWait } from '../metrics';
import { DocsApiFailureType, docsApiDetailsOf } from '../../contract/failure-types';
import {
  BudgetFailureType,
  budgetPermitGrantedSignal,
  budgetPermitQueuedSignal,
  type BudgetKind,
  type BudgetRefusal,
  type PermitAsk,
  type PermitGrant,
  type PermitRelease,
} from '../../contract/budget';

/**
 * Asking costs one marker and is safe to repeat (the limiter ignores a repeated permit id): retried until it gets
 * through. A release is bounded: a limiter that cannot be reached in about a minute is given up with a warning,
 * and the permit frees itself (the limiter's hold timeout, or its window), so the workflow never waits on it.
 */
const { requestBudgetPermit } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const { releaseBudgetPermits } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
  },
});

/**
 * A permit not granted after this long is asked for again (same permit id: a limiter that has it ignores the
 * repeat). A limiter terminated while the permit waited is then started again, so no wait lasts for ever.
 */
const REASK_AFTER_MS = 2 * 60_000;

/** What a workflow asks for: the rest of the PermitAsk (its id, requester, run; the worker adds the budget). */
export type AskOptions = Pick<PermitAsk, 'projectId'> &
  Partial<Pick<PermitAsk, 'permitId' | 'count' | 'exclusive' | 'refusal'>> & {
    /** Give up (non-retryable BudgetWaitTimedOut) when no grant came by then. */
    deadlineAt: number;
  };

/**
 * A workflow's side of a budget: asks the budget's limiter workflow for permits and waits for the grant signal.
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

  async acquire({ deadlineAt, ...options }: AskOptions): Promise<PermitGrant> {
    const { workflowId, runId } = workflowInfo();
    // `count` always set: a limiter of the previous version then answers with count, spare and spendBy too.
    const ask: Omit<PermitAsk, 'budget'> = {
      permitId: uuid4(),
      count: 1,
      ...options,
      requesterId: workflowId,
      requesterRunId: runId,
    };
    const { permitId } = ask;
    const granted = () => this.#granted.has(permitId);
    const askedAt = Date.now();
    this.#waits.set(permitId, null);
    try {
      for (;;) {
        await requestBudgetPermit({ kind: this.kind, ask });
        const waitMs = Math.min(REASK_AFTER_MS, deadlineAt - Date.now());
        if (granted() || (waitMs > 0 && (await condition(granted, waitMs)))) break;
        if (Date.now() >= deadlineAt) throw this.timedOut({ projectId: ask.projectId, deadlineAt });
      }
    } catch (error) {
      // Cancelled while the permit waited: withdrawn, so that its grant never goes to a run that may have ended
      // by then, and an exclusive one does not hold the budget until its timeout.
      if (isCancellation(error)) {
        await CancellationScope.nonCancellable(() => this.release(ask.projectId, [{ permitId }]));
      }
      throw error;
    } finally {
      const hadEstimate = this.#waits.get(permitId) != null;
      this.#waits.delete(permitId);
      if (hadEstimate) this.onWaitChange();
    }
    const grant = this.#granted.get(permitId) as PermitGrant;
    this.#granted.delete(permitId);
    recordPermitWait(this.kind, Date.now() - askedAt);
    return grant;
  }

  /** The failure of an ask that got no grant before its deadline. */
  timedOut({ projectId, deadlineAt }: Pick<AskOptions, 'projectId' | 'deadlineAt'>): ApplicationFailure {
    return ApplicationFailure.create({
      type: BudgetFailureType.waitTimedOut,
      nonRetryable: true,
      message: `no ${this.kind} budget for project ${projectId} before the deadline ${new Date(deadlineAt).toISOString()}`,
    });
  }

  /** Gives permits back (see PermitRelease): bounded, never this workflow's failure. */
  async release(projectId: string, releases: PermitRelease[]): Promise<void> {
    if (releases.length === 0) return;
    try {
      await releaseBudgetPermits({ kind: this.kind, projectId, releases });
    } catch (error) {
      if (isCancellation(error)) throw error;
      log.warn('Permit release given up: the limiter frees it after its hold timeout or window', {
        kind: this.kind,
        projectId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** The refusal to report when an activity failed with the service's 429; undefined for any other failure. */
export function refusalOf(error: unknown, permit: Pick<PermitGrant, 'grantedAt'>): BudgetRefusal | undefined {
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
