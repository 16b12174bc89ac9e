import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  BUDGET_LIMITER_WORKFLOW_TYPE,
  budgetLimiterSummary,
  budgetLimiterWorkflowId,
  releaseBudgetPermitsSignal,
  requestBudgetPermitSignal,
  type BudgetKind,
  type BudgetRelease,
  type PermitAsk,
  type RateBudget,
} from '../contract/budget';

import {
  earlierCreateOf,
  earlierFollowUpsOf,
  readCreateRecord,
  writeCreateRecord,
} from '../client/agent-job-runs';
import { createAgentJobActivities, type AgentJobActivityDeps, type CreateRecords } from './agent-job';
import { createNightlyActivities } from './nightly';
import { agentJobInputSchema } from '../contract/agent-job';
import type { InputIssue } from '../contract/failure-types';
import { InputValidationError, parseOrThrow } from '../contract/validation';
import { visitorsNightlyInputSchema } from '../contract/nightly-schema';
import { visitorsExportInputSchema } from '../contract/visitors-export';
import { createVisitorsExportActivities, type VisitorsExportActivityDeps } from './visitors-export';

export type ActivityDeps = AgentJobActivityDeps & VisitorsExportActivityDeps & BudgetActivityDeps;

/** Every activity the worker registers, built from explicit dependencies (real parts or test fakes). */
export function createActivities(deps: ActivityDeps) {
  const budget = createBudgetActivities(deps);
  return {
    ...createAgentJobActivities({
      releasePermit: budget.releaseBudgetPermits,
      createRecords: temporalCreateRecords,
      ...deps,
    }),
    ...createVisitorsExportActivities(deps),
    ...budget,
    checkWorkflowInput,
    ...createNightlyActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Create records as Temporal workflows (client/agent-job-runs.ts), through the activity's client. */
const temporalCreateRecords: CreateRecords = {
  read: (workflowId) => readCreateRecord(Context.current().client, workflowId),
  write: (record) => writeCreateRecord(Context.current().client, record, Context.current().info.taskQueue),
  earlierFollowUps: (workflowId, runId) => earlierFollowUpsOf(Context.current().client, workflowId, runId),
  earlierCreate: (workflowId, runId) => earlierCreateOf(Context.current().client, workflowId, runId),
};

const INPUT_SCHEMAS = {
  agentJob: agentJobInputSchema,
  visitorsExport: visitorsExportInputSchema,
  visitorsNightly: visitorsNightlyInputSchema,
} as const;

/**
 * Checks a workflow's input against the contract's zod schema, run by the workflow as a local activity: zod
 * stays out of the workflow sandbox, where it would be evaluated again for every cached workflow
 * (docs/agent-job.md, "Validation and the sandbox"). Resolves null for valid input, else why it is refused (the
 * message names each field and rule); only the refusal enters history, never the input again.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- an activity returns a promise
async function checkWorkflowInput(
  workflow: keyof typeof INPUT_SCHEMAS,
  input: unknown,
): Promise<{ message: string; issues: InputIssue[] } | null> {
  try {
    parseOrThrow(INPUT_SCHEMAS[workflow], input, `${workflow} input`);
    return null;
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    return { message: error.message, issues: [...error.issues] };
  }
}

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
  const limiterId = (kind: BudgetKind, projectId: string) =>
    budgetLimiterWorkflowId(kind, budgets.organization, projectId);

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
