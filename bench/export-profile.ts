import type { temporal } from '@temporalio/proto';
import { eventTimeMs } from './lib/history';
import { median } from './lib/stats';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Where one export's wall time went, read from its history (all runs). */
export interface ExportProfile {
  /** Workflow started (first run) to the first page scheduled. */
  startMs: number;
  /** First page scheduled to the last page completed. */
  pagesMs: number;
  /** Merge activity scheduled to completed. */
  mergeMs: number;
  /** Merge completed to the workflow closed (staging removal, last workflow task). */
  finishMs: number;
  /** Runs of pages (fetchVisitorsPages): one page each while the budget binds, more while it has room. */
  pageActivities: number;
  /** Per page activity, median: scheduled to started (waiting for a worker slot / poll). */
  pageQueueMs: number;
  /** Per page activity, median: started to completed (the HTTP requests, the staging writes, the report). */
  pageRunMs: number;
  /** Per page activity, median: completed to the next one scheduled (a workflow task round trip). */
  pageTurnaroundMs: number;
  /** Of pagesMs, the time no page activity was scheduled or running: the workflow's own turns, permits. */
  pagesIdleMs: number;
  runs: number;
}

export function exportProfile(events: HistoryEvent[], runs: number): ExportProfile {
  const scheduled = new Map<string, { type: string; at: number }>();
  const pages: { scheduledAt: number; startedAt: number; completedAt: number }[] = [];
  const started = new Map<string, number>();
  let merge = { scheduledAt: Number.NaN, completedAt: Number.NaN };
  // Event ids restart in every run; a run's activities all end within it (the window drains before it
  // continues as new), so the latest event with an id is the one a completion refers to.
  for (const event of events) {
    const id = String(event.eventId);
    const at = eventTimeMs(event);
    const sched = event.activityTaskScheduledEventAttributes;
    if (sched) scheduled.set(id, { type: sched.activityType?.name ?? '', at });
    const start = event.activityTaskStartedEventAttributes;
    if (start) started.set(String(start.scheduledEventId), at);
    const done = event.activityTaskCompletedEventAttributes;
    if (done) {
      const key = String(done.scheduledEventId);
      const of = scheduled.get(key);
      if (of?.type === 'fetchVisitorsPages') {
        pages.push({ scheduledAt: of.at, startedAt: started.get(key) ?? Number.NaN, completedAt: at });
      } else if (of?.type === 'mergeVisitorsExport') {
        merge = { scheduledAt: of.at, completedAt: at };
      }
    }
  }
  const firstAt = eventTimeMs(events[0] ?? {});
  const closedAt = eventTimeMs(events.at(-1) ?? {});
  const pageScheduled = pages.map((p) => p.scheduledAt).sort((a, b) => a - b);
  const pageCompleted = pages.map((p) => p.completedAt).sort((a, b) => a - b);
  const turnarounds = pageCompleted
    .map((completedAt) => (pageScheduled.find((s) => s >= completedAt) ?? Number.NaN) - completedAt)
    .filter((ms) => Number.isFinite(ms));
  const pagesMs = (pageCompleted.at(-1) ?? Number.NaN) - (pageScheduled[0] ?? Number.NaN);
  return {
    startMs: (pageScheduled[0] ?? Number.NaN) - firstAt,
    pagesMs,
    mergeMs: merge.completedAt - merge.scheduledAt,
    finishMs: closedAt - merge.completedAt,
    pageActivities: pages.length,
    pagesIdleMs: pagesMs - coveredMs(pages.map((p) => [p.scheduledAt, p.completedAt] as const)),
    pageQueueMs: median(pages.map((p) => p.startedAt - p.scheduledAt)),
    pageRunMs: median(pages.map((p) => p.completedAt - p.startedAt)),
    pageTurnaroundMs: median(turnarounds),
    runs,
  };
}

/** The length of the union of intervals. */
function coveredMs(intervals: (readonly [number, number])[]): number {
  let covered = 0;
  let reach = Number.NEGATIVE_INFINITY;
  for (const [from, to] of [...intervals].sort((a, b) => a[0] - b[0])) {
    if (to <= reach) continue;
    covered += to - Math.max(from, reach);
    reach = to;
  }
  return covered;
}
