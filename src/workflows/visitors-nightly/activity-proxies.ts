import { proxyActivities } from '@temporalio/workflow';
import type { createNightlyActivities } from '../../activities/nightly';

type NightlyActivities = ReturnType<typeof createNightlyActivities>;

/** Reading the destination's manifests (and the schedule's zone): a few attempts, then the run fails saying so. */
export const { planNightlyExport } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * Waiting for a day's export that another run started: as long as that export may take (its deadline is a day),
 * heartbeating, so a dead worker is noticed after 30 s and the wait goes on elsewhere.
 */
export const { awaitDayExport } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: '25 hours',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});
