import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  BUDGET_LIMITER_WORKFLOW_TYPE,
  budgetLimiterSummary,
  budgetLimiterWorkflowId,
  releaseBudgetPermitsSignal,
  requestBudgetPermitSignal,
  type BudgetKind,
  type PermitAsk,
  type PermitRelease,
  type RateBudget,
} from '../contract/budget';

export interface BudgetActivityDeps {
  budgets: {
    analytics: RateBudget;
    agent: RateBudget;
    /** Names the organization in limiter workflow ids: `ApiKey.fingerprint()`, never the key. */
    organization: string;
  };
}

/**
 * The worker's side of the budgets: it knows the configured budget and the organization, so workflow code never
 * sees either.
 */
export function createBudgetActivities({ budgets }: BudgetActivityDeps) {
  const limiterId = (kind: BudgetKind, projectId: string): string =>
    budgetLimiterWorkflowId(kind, budgets.organization, kind === 'agent' ? projectId : undefined);

  return {
    /** Queues the ask at the budget's limiter, starting the limiter (and its UI summary) if none runs. */
    async requestBudgetPermit({
      kind,
      ask,
    }: {
      kind: BudgetKind;
      ask: Omit<PermitAsk, 'budget'>;
    }): Promise<void> {
      const { client, info } = Context.current();
      const workflowId = limiterId(kind, ask.projectId);
      await client.workflow.signalWithStart(BUDGET_LIMITER_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: info.taskQueue,
        // Every permit waits on the limiter's workflow tasks: they go ahead of any job's or export's.
        priority: { priorityKey: 1 },
        args: [{ budget: budgets[kind] }],
        staticSummary: budgetLimiterSummary(workflowId, budgets[kind]),
        signal: requestBudgetPermitSignal,
        signalArgs: [{ ...ask, budget: budgets[kind] }],
      });
    },

    /**
     * Gives permits back (see PermitRelease). A limiter that is gone (terminated, never started) holds no permit:
     * there is nothing to give back, and the caller is not failed for it.
     */
    releaseBudgetPermits: async (input: BudgetRelease): Promise<void> => {
      const handle = Context.current().client.workflow.getHandle(limiterId(input.kind, input.projectId));
      try {
        for (const release of input.releases) await handle.signal(releaseBudgetPermitsSignal, release);
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        log.warn('Budget limiter gone: the permits it granted are not held any more', {
          limiter: handle.workflowId,
        });
      }
    },
  };
}

/** Permits given back to the limiter of one budget (the project names the agent budget's limiter). */
export interface BudgetRelease {
  kind: BudgetKind;
  projectId: string;
  releases: PermitRelease[];
}

/** Releases a permit from inside another activity (a create or message): bounded, and never its caller's failure. */
export type ReleasePermit = (release: BudgetRelease) => Promise<unknown>;
