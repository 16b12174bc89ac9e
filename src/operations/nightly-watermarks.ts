import type { Client } from '@temporalio/client';
import { latestNightlyRun } from '../client/schedule';
import { visitorsScheduleId } from '../contract/names';
import { coveredOfMemo } from '../contract/nightly';
import type { WorkerMetrics } from './metrics';

/** How often each worker reads the nightly schedules' latest runs again. */
const NIGHTLY_WATERMARKS_READ_MS = 5 * 60_000;

/**
 * Sets each nightly schedule's gauge from its latest run's memo (kept by the server): the end of the first span of
 * instants held whole at the destination, so that every worker exports it from its start, whichever worker ran the
 * nights. A series whose schedule is gone, or whose zone changed, reads NaN.
 */
export async function readNightlyWatermarks(client: Client, metrics: WorkerMetrics): Promise<void> {
  const prefix = visitorsScheduleId('');
  const scheduled = new Set<string>();
  for await (const schedule of client.schedule.list()) {
    if (!schedule.scheduleId.startsWith(prefix)) continue;
    const project = schedule.scheduleId.slice(prefix.length);
    const run = await latestNightlyRun(client, schedule.info?.recentActions ?? []);
    const [first] = run === null ? [] : coveredOfMemo(run);
    if (run === null || first === undefined) continue;
    metrics.record('nightlyWatermarkSeconds', first.to / 1000, { project, time_zone: run.timeZone });
    scheduled.add(JSON.stringify([project, run.timeZone]));
  }
  metrics.retain('nightlyWatermarkSeconds', (l) => scheduled.has(JSON.stringify([l.project, l.time_zone])));
}

/** Reads them now and every NIGHTLY_WATERMARKS_READ_MS until stopped; a read that fails is reported, not fatal. */
export function watchNightlyWatermarks(
  client: Client,
  metrics: WorkerMetrics,
  onError: (error: unknown) => void,
): { stop(): void } {
  const read = (): void => void readNightlyWatermarks(client, metrics).catch(onError);
  const timer = setInterval(read, NIGHTLY_WATERMARKS_READ_MS);
  timer.unref();
  read();
  return { stop: () => clearInterval(timer) };
}
