import { makeContinueAsNewFunc, workflowInfo, type Workflow } from '@temporalio/workflow';

/**
 * The history length (events) at which each workflow continues as new, unless the server suggested it earlier
 * (`continueAsNewSuggested`, at 4,096 events by default). A workflow's `continueAsNewAfterEvents` input overrides
 * its default (tests lower it). All far below Temporal's 50,000-event and 50 MB limits.
 */
export const CONTINUE_AS_NEW_AFTER_EVENTS = {
  /** agentJob: polls are retries of one activity and write no events; only long follow-up conversations grow it. */
  agentJob: 5_000,
  /** visitorsExport: a run of pages (one activity) costs about 6 events, so about 150 of them per run. */
  visitorsExport: 1_000,
  /** The budget limiter: a grant costs about 7 events (the ask, the grant signalled out, a task), so about 140 per run. */
  budgetLimiter: 1_000,
} as const;

/** History bytes at which any run continues as new: small payloads keep this far from the event limit. */
const CONTINUE_AS_NEW_AFTER_BYTES = 1024 * 1024;

/** Whether the current run should continue as new now: the server suggests it, or its history reached a limit. */
export function continueAsNewDue(eventLimit: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength >= eventLimit ||
    info.historySize >= CONTINUE_AS_NEW_AFTER_BYTES
  );
}

/**
 * How long an idle long-lived run on a versioned worker waits at most before it looks at newVersionTargeted: the
 * server tells a run about a new current version only in a workflow task, so one that nothing wakes would keep
 * its old version from draining. Busy runs see it at their next task.
 */
const VERSION_CHECK_INTERVAL_MS = 5 * 60_000;

/** The deployment's current (or ramping) version is not the one this pinned run is on: time to move. */
export function newVersionTargeted(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/**
 * The timeout a long-lived run's wait should have: `timeoutMs`, shortened to VERSION_CHECK_INTERVAL_MS on a
 * versioned worker. Undefined (wait without a timer) on an unversioned one, whose runs never move. An unversioned
 * worker reports a version too, with an empty deployment name; replay reads the one history recorded, so this is
 * deterministic.
 */
export function withVersionCheck(timeoutMs: number | undefined): number | undefined {
  if (!workflowInfo().currentDeploymentVersion?.deploymentName) return timeoutMs;
  return Math.min(timeoutMs ?? VERSION_CHECK_INTERVAL_MS, VERSION_CHECK_INTERVAL_MS);
}

/**
 * continueAsNew whose next run starts on the deployment's current version (upgrade on continue-as-new), then is
 * pinned there. What the run hands over is read by the next version's code: its shape changes compatibly.
 */
export function continueAsNewOnCurrentVersion<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  return makeContinueAsNewFunc<F>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(...args);
}
