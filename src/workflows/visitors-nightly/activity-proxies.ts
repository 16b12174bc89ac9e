import { proxyActivities } from '@temporalio/workflow';
import type { createNightlyActivities } from '../../activities/nightly';

type NightlyActivities = ReturnType<typeof createNightlyActivities>;

/**
 * Reading and reporting to the watermark are updates of the watermark workflow: idempotent (a read sets only a
 * missing watermark, a report records a day), retried a few times, then the run fails saying so: a watermark
 * that does not answer never holds a run for ever (a call gives up after 20 s, three attempts in all).
 */
export const { planNightlyExport, reportNightlyDay } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: '1 minute',
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
