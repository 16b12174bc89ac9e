import { Context } from '@temporalio/activity';
import {
  BUDGET_LIMITER_WORKFLOW_TYPE,
  budgetLimiterWorkflowId,
  releaseBudgetPermitSignal,
  requestBudgetPermitSignal,
  returnBudgetPermitsSignal,
  type BudgetKind,
  type PermitReturn,
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

/** A permit request as the workflow knows it: the worker adds the requester and the configured budget. */
export type PermitAsk = Omit<PermitRequest, 'requesterId' | 'budget'> & { kind: BudgetKind };

export interface PermitRelease {
  kind: BudgetKind;
  projectId: string;
  permitId: string;
}

export type PermitReturnAsk = PermitReturn & { kind: BudgetKind; projectId: string };

/**
 * The worker's side of the budgets: it knows the configured budget and the organization, so workflow code never
 * sees either. Run as local activities: asking costs one marker in the requester's history.
 */
export function createBudgetActivities({ budgets }: BudgetActivityDeps) {
  const limiterId = (kind: BudgetKind, projectId: string): string =>
    budgetLimiterWorkflowId(kind, budgets.organization, kind === 'agent' ? projectId : undefined);
  return {
    /** Queues a permit at the budget's limiter, starting the limiter if none runs (a repeat is ignored). */
    async requestBudgetPermit(ask: PermitAsk): Promise<void> {
      const { client, info } = Context.current();
      const requesterId = info.workflowExecution?.workflowId;
      if (requesterId === undefined) throw new InvariantError('requestBudgetPermit runs for a workflow only');
      const { kind, ...request } = ask;
      const budget = budgets[kind];
      await client.workflow.signalWithStart(BUDGET_LIMITER_WORKFLOW_TYPE, {
        workflowId: limiterId(kind, ask.projectId),
        taskQueue: info.taskQueue,
        // Every permit waits on the limiter's workflow tasks: they go ahead of any job's or export's.
        priority: { priorityKey: 1 },
        args: [{ budget }],
        signal: requestBudgetPermitSignal,
        signalArgs: [{ ...request, requesterId, budget }],
      });
    },

    /** Permits granted and never spent go back to the budget (a repeat is ignored). */
    async returnBudgetPermits({ kind, projectId, ...permitReturn }: PermitReturnAsk): Promise<void> {
      const handle = Context.current().client.workflow.getHandle(limiterId(kind, projectId));
      await handle.signal(returnBudgetPermitsSignal, permitReturn);
    },

    /** An exclusive permit's request is done: the next one may go. */
    async releaseBudgetPermit(release: PermitRelease): Promise<void> {
      const handle = Context.current().client.workflow.getHandle(limiterId(release.kind, release.projectId));
      await handle.signal(releaseBudgetPermitSignal, { permitId: release.permitId });
    },
  };
}
