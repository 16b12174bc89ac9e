import { proxyActivities } from '@temporalio/workflow';
import type { createNightlyActivities } from '../../activities/nightly';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';

type ExportActivities = ReturnType<typeof createVisitorsExportActivities>;

/**
 * A page is an idempotent GET staged under a fixed name: retried freely (1 s doubling to 30 s; Retry-After wins
 * through nextRetryDelay). 4xx failures are non-retryable already. The page heartbeats while its request is in
 * flight, so a dead worker is noticed after 15 s and a cancelled page stops at once.
 */
export const { fetchVisitorsPage } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '60 seconds',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 20,
  },
});

/**
 * Within a budget every request needs a permit, so the workflow retries a page itself (another permit each time)
 * and a 429 costs no attempt: one attempt per activity.
 */
export const { fetchVisitorsPage: fetchVisitorsPageOnce } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '60 seconds',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * A block of pages while the budget has room (about two seconds of them, `concurrency` at a time): one attempt,
 * since the workflow retries its failed pages with permits of their own. It heartbeats every 5 s.
 */
export const { fetchVisitorsPageBlock } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

const MERGE_RETRY = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
};

/** The merge streams every staged page once; it heartbeats per page and may be redone whole. */
export const { mergeVisitorsExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: MERGE_RETRY,
});

/**
 * The same since the merge also heartbeats every 5 s while it uploads (patch `merge-heartbeat-15s`): another
 * worker takes over the merge of a worker killed mid-merge after 15 s instead of a minute.
 */
export const { mergeVisitorsExport: mergeVisitorsExportTakenOverSooner } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: MERGE_RETRY,
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

/**
 * Reading and moving the nightly watermark are updates of the watermark workflow: idempotent (a read sets only a
 * missing watermark, an advance records a day), so retried until they go through.
 */
export const { planNightlyExport, advanceNightlyWatermark, dayExportStatus } = proxyActivities<
  ReturnType<typeof createNightlyActivities>
>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
