import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  BUDGET_LIMITER_WORKFLOW_TYPE,
  budgetLimiterSummary,
  budgetLimiterWorkflowId,
  releaseBudgetPermitsSignal,
  requestBudgetPermitSignal,
  type BudgetKind,
  type PermitRelease,
  type PermitRequest,
  type RateBudget,
} from '../contract/budget';
import { InvariantError } from '../contract/errors';

export interface BudgetActivityDeps {
  budgets: {
    analytics: RateBudget;
    agent: RateBudget;
    /** Names the organization in limiter workflow ids: `ApiKey.fingerprint()`, never the key. */
    organization: string;
  };
}

/** Which budget: its kind and (for the agent budget, one per project) the project. */
export interface BudgetRef {
  kind: BudgetKind;
  projectId: string;
}

/** A permit request as the workflow sends it: the worker adds the requester (its run) and the configured budget. */
export type PermitRequestInput = Omit<PermitRequest, 'requesterId' | 'requesterRunId' | 'budget'> & BudgetRef;

export type PermitReleaseInput = PermitRelease & BudgetRef;

/** Whether a release reached the budget's limiter. */
export type ReleaseOutcome = 'released' | 'limiter-gone';

/**
 * The worker's side of the budgets: it knows the configured budget and the organization, so workflow code never
 * sees either. Run as local activities: asking costs one marker in the requester's history.
 */
export function createBudgetActivities({ budgets }: BudgetActivityDeps) {
  const limiterId = (kind: BudgetKind, projectId: string): string =>
    budgetLimiterWorkflowId(kind, budgets.organization, kind === 'agent' ? projectId : undefined);

  /**
   * Permits go back to the budget (a repeat is ignored). A limiter that is gone (terminated, never started)
   * holds no permit: there is nothing to give back, and the caller is told so instead of retrying for ever.
   */
  async function releaseBudgetPermits({
    kind,
    projectId,
    ...release
  }: PermitReleaseInput): Promise<ReleaseOutcome> {
    const handle = Context.current().client.workflow.getHandle(limiterId(kind, projectId));
    try {
      await handle.signal(releaseBudgetPermitsSignal, release);
      return 'released';
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      log.warn('Budget limiter gone: the permits it granted are not held any more', {
        limiter: handle.workflowId,
        releaseId: release.releaseId,
      });
      return 'limiter-gone';
    }
  }

  return {
    /**
     * Queues a permit at the budget's limiter, starting the limiter if none runs (a repeat is ignored). The grant
     * goes to the run that asked, never to a later run of the same workflow id.
     */
    async requestBudgetPermit(ask: PermitRequestInput): Promise<void> {
      const { client, info } = Context.current();
      const requester = info.workflowExecution;
      if (requester === undefined) throw new InvariantError('requestBudgetPermit runs for a workflow only');
      const { kind, ...request } = ask;
      const budget = budgets[kind];
      const workflowId = limiterId(kind, ask.projectId);
      await client.workflow.signalWithStart(BUDGET_LIMITER_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: info.taskQueue,
        // Every permit waits on the limiter's workflow tasks: they go ahead of any job's or export's.
        priority: { priorityKey: 1 },
        args: [{ budget }],
        staticSummary: budgetLimiterSummary(workflowId, budget),
        signal: requestBudgetPermitSignal,
        signalArgs: [
          { ...request, requesterId: requester.workflowId, requesterRunId: requester.runId, budget },
        ],
      });
    },

    releaseBudgetPermits,
  };
}

/** Releases a permit from inside another activity (a create or message): bounded, and never its caller's failure. */
export type ReleasePermit = (release: PermitReleaseInput) => Promise<unknown>;
