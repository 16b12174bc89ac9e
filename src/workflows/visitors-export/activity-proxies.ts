import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';

type ExportActivities = ReturnType<typeof createVisitorsExportActivities>;

/**
 * A run of pages (see fetchPageRun): one attempt, since every request needs a permit and the workflow retries the
 * run's pages itself with permits of their own. It heartbeats after every chunk it stages and every 5 s, so a dead
 * worker is noticed after 15 s and a cancelled run stops at its next heartbeat. A cancelled run is awaited: it
 * says how many of its permits it spent, and the others go back to the budget (a wide run holds up to one ask's 256).
 */
export const { fetchVisitorsPages } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * The merge streams every staged page once and may be redone whole. It heartbeats per page and every 5 s while
 * it uploads: another worker takes over the merge of a worker killed mid-merge after 15 s.
 */
export const { mergeVisitorsExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

export const { prepareVisitorsExportStaging, removeVisitorsExportStaging } =
  proxyActivities<ExportActivities>({
    startToCloseTimeout: '5 minutes',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 5,
    },
  });
