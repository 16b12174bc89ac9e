import { makeContinueAsNewFunc, setWorkflowOptions, workflowInfo, type Workflow } from '@temporalio/workflow';
import type { VersioningBehavior } from '@temporalio/common';

/**
 * How each workflow type meets a new Worker Deployment Version (docs/upgrading.md has the table and the deploy).
 * PINNED: a run finishes on the code that started it, so a change needs no patch; the old version's workers stay
 * up until its pinned runs end (`temporal worker deployment describe-version` shows the drain).
 */
export const VERSIONING_BEHAVIOR = {
  /** An export's staging, page plan and merge are one version's: a newer worker could not read them. */
  visitorsExport: 'PINNED',
  /**
   * A job polls for hours (its deadline, 24 h by default), mostly inside one retried activity that wakes the run
   * only at the end: it finishes where it started, and an old version stays up until its last job ends.
   */
  agentJob: 'PINNED',
  /** Never ends: pinned to one version per run, it moves at continue-as-new (continueAsNewOnCurrentVersion). */
  docsBudgetLimiter: 'PINNED',
  /** Completes in its first task (it returns its input): it never meets another version. */
  agentJobCreateRecord: 'PINNED',
  /**
   * A nightly run awaits its days' exports (children, each pinned on its own): it finishes on the code that
   * started it.
   */
  visitorsNightly: 'PINNED',
} as const satisfies Record<string, VersioningBehavior>;

export type VersionedWorkflowType = keyof typeof VERSIONING_BEHAVIOR;

/**
 * Declares each workflow function's behaviour (test/workflows/versioning.test.ts: every registered type has one).
 * Only a versioned worker may send one (an unversioned worker's task completion with a behaviour is refused),
 * hence the getter: it runs before a run's first activation, where the worker's version is known.
 */
export function declareVersioningBehaviors(workflows: Record<VersionedWorkflowType, Workflow>): void {
  for (const [type, behavior] of Object.entries(VERSIONING_BEHAVIOR)) {
    setWorkflowOptions(
      () => (onVersionedWorker() ? { versioningBehavior: behavior } : {}),
      workflows[type as VersionedWorkflowType],
    );
  }
}

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
