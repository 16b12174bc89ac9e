import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';

type ExportActivities = ReturnType<typeof createVisitorsExportActivities>;

/**
 * A run of pages: one attempt (the workflow retries its pages with permits of their own). A dead worker is noticed
 * after 15 s; a cancelled run is awaited, to say how many permits it spent.
 */
export const { fetchVisitorsPages } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** The merge may be redone whole; another worker takes over a merge whose worker died after 15 s. */
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
