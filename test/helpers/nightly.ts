import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { visitorsScheduleId } from '../../src/contract/names';
import type { VisitorsNightlyResult } from '../../src/contract/nightly';
import type { RequestLogEntry } from '../../dev/simulator/types';

/**
 * Fires a schedule at every nominal time in [start, end), one run after the other (BUFFER_ALL), as the nights
 * themselves would: the way these tests make time pass. Returns once the schedule has started a run for the
 * window, so two calls fire their nights in order: back-to-back backfill requests on a loaded dev server once
 * left the first window without a run (CI, 2026-11-24).
 */
export async function fireNights(
  client: Client,
  projectId: string,
  start: string,
  end: string,
  timeoutMs = 60_000,
): Promise<void> {
  const handle = client.schedule.getHandle(visitorsScheduleId(projectId));
  const [from, to] = [new Date(start), new Date(end)];
  await handle.backfill({ start: from, end: to, overlap: ScheduleOverlapPolicy.BUFFER_ALL });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { info } = await handle.describe();
    const fired = info.recentActions.some((a) => a.scheduledAt >= from && a.scheduledAt < to);
    if (fired) return;
    if (Date.now() > deadline) {
      assert.fail(`schedule ${handle.scheduleId} started no run for its nights in [${start}, ${end})`);
    }
    await sleep(200);
  }
}

/**
 * Waits until the schedule has started at least `atLeast` runs, all of them closed, and no new one for 2 s;
 * returns their results (a failed run fails the test), oldest nominal time first.
 */
export async function settledRuns(
  client: Client,
  projectId: string,
  atLeast: number,
  timeoutMs = 120_000,
): Promise<VisitorsNightlyResult[]> {
  const scheduleId = visitorsScheduleId(projectId);
  const deadline = Date.now() + timeoutMs;
  let stableSince: number | undefined;
  let lastCount = -1;
  let seen: string[] = [];
  while (Date.now() < deadline) {
    const runs: { workflowId: string; runId: string; status: string; startTime: Date }[] = [];
    for await (const run of client.workflow.list({ query: `TemporalScheduledById = '${scheduleId}'` })) {
      runs.push({
        workflowId: run.workflowId,
        runId: run.runId,
        status: run.status.name,
        startTime: run.startTime,
      });
    }
    seen = runs.map((run) => `${run.workflowId} ${run.status}`);
    const closed = runs.every((run) => run.status !== 'RUNNING');
    if (runs.length >= atLeast && closed) {
      if (stableSince === undefined || runs.length !== lastCount) stableSince = Date.now();
      if (stableSince !== undefined && Date.now() - stableSince >= 2_000) {
        const ordered = runs.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
        return Promise.all(
          ordered.map(
            (run) =>
              client.workflow.getHandle(run.workflowId, run.runId).result() as Promise<VisitorsNightlyResult>,
          ),
        );
      }
    } else {
      stableSince = undefined;
    }
    lastCount = runs.length;
    await sleep(300);
  }
  assert.fail(`schedule ${scheduleId} did not settle with ${atLeast} closed runs: ${seen.join(', ')}`);
}

/** The `<dateFrom>_<dateTo>` ranges the service was asked for, one entry per page request, sorted. */
export function requestedRanges(requests: readonly RequestLogEntry[], projectId: string): string[] {
  return requests
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId)
    .map((r) => `${r.query.dateFrom ?? ''}_${r.query.dateTo ?? ''}`)
    .sort();
}

/** `<day>T00:00:00<from>_<day+1>T00:00:00<to>`: a zone's day as the service is sent it. */
export function zoneDay(day: string, next: string, fromOffset: string, toOffset = fromOffset): string {
  return `${day}T00:00:00${fromOffset}_${next}T00:00:00${toOffset}`;
}
