import { makeContinueAsNewFunc, workflowInfo, type Workflow } from '@temporalio/workflow';

/**
 * How long an idle long-lived run on a versioned worker waits at most before it looks at newVersionTargeted: the
 * server tells a run about a new current version only in a workflow task, so one that nothing wakes would keep
 * its old version from draining. Busy runs see it at their next task.
 */
export const VERSION_CHECK_INTERVAL_MS = 5 * 60_000;

/**
 * Whether the worker running this task joined a Worker Deployment Version. An unversioned worker reports a
 * version too, with an empty deployment name; replay reads the one history recorded, so this is deterministic.
 */
function onVersionedWorker(): boolean {
  return Boolean(workflowInfo().currentDeploymentVersion?.deploymentName);
}

/** The deployment's current (or ramping) version is not the one this pinned run is on: time to move. */
export function newVersionTargeted(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/**
 * The timeout a long-lived run's wait should have: `timeoutMs`, shortened to VERSION_CHECK_INTERVAL_MS on a
 * versioned worker. Undefined (wait without a timer) on an unversioned one, whose runs never move.
 */
export function withVersionCheck(timeoutMs: number | undefined): number | undefined {
  if (!onVersionedWorker()) return timeoutMs;
  return Math.min(timeoutMs ?? VERSION_CHECK_INTERVAL_MS, VERSION_CHECK_INTERVAL_MS);
}

/**
 * continueAsNew whose next run starts on the deployment's current version (upgrade on continue-as-new), then is
 * pinned there. What the run hands over is read by the next version's code: its shape changes compatibly.
 */
export function continueAsNewOnCurrentVersion<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  return makeContinueAsNewFunc<F>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(...args);
}
