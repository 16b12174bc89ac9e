import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { stateFromMemo } from '../activities/nightly-rebuild';
import { visitorsScheduleId } from '../contract/names';
import { nightlyWatermarkWorkflowId } from '../contract/nightly';
import type { WorkerMetrics } from './metrics';

const DAY_MS = 86_400_000;
/** How often each worker reads the nightly schedules and their watermarks again. */
export const NIGHTLY_WATERMARKS_READ_MS = 5 * 60_000;

/** Sets the gauge of a project's watermark: the end of the watermark's day, the day taken as UTC. */
export function recordWatermark(
  metrics: WorkerMetrics,
  project: string,
  timeZone: string,
  watermark: string | null,
): void {
  if (watermark === null) return;
  const endOfDay = Date.parse(`${watermark}T00:00:00Z`) + DAY_MS;
  metrics.record('nightlyWatermarkSeconds', endOfDay / 1000, { project, time_zone: timeZone });
}

/**
 * Reads the watermark of every nightly schedule from durable state (its watermark workflow's memo, kept by the
 * server) into the gauge: every worker exports it from its start, whichever worker ran the nights. A series whose
 * schedule is gone, or whose zone changed, reads NaN.
 */
export async function readNightlyWatermarks(client: Client, metrics: WorkerMetrics): Promise<void> {
  const prefix = visitorsScheduleId('');
  const scheduled = new Set<string>();
  for await (const schedule of client.schedule.list()) {
    if (!schedule.scheduleId.startsWith(prefix)) continue;
    const project = schedule.scheduleId.slice(prefix.length);
    let memo: Record<string, unknown> | undefined;
    try {
      ({ memo } = await client.workflow.getHandle(nightlyWatermarkWorkflowId(project)).describe());
    } catch (error) {
      // No night run yet: nothing exported, nothing behind.
      if (error instanceof WorkflowNotFoundError) continue;
      throw error;
    }
    const state = stateFromMemo(memo, project);
    if (state === undefined || state.timeZone === null || state.watermark === null) continue;
    recordWatermark(metrics, project, state.timeZone, state.watermark);
    scheduled.add(JSON.stringify([project, state.timeZone]));
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
