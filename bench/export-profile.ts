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
  /** Per page, median: scheduled to started (waiting for a worker slot / poll). */
  pageQueueMs: number;
  /** Per page, median: started to completed (the HTTP request, the staging write, the report). */
  pageRunMs: number;
  /** Per page, median: completed to the next page scheduled on its slot (a workflow task round trip). */
  pageTurnaroundMs: number;
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
      if (of?.type === 'fetchVisitorsPage') {
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
  return {
    startMs: (pageScheduled[0] ?? Number.NaN) - firstAt,
    pagesMs: (pageCompleted.at(-1) ?? Number.NaN) - (pageScheduled[0] ?? Number.NaN),
    mergeMs: merge.completedAt - merge.scheduledAt,
    finishMs: closedAt - merge.completedAt,
    pageQueueMs: median(pages.map((p) => p.startedAt - p.scheduledAt)),
    pageRunMs: median(pages.map((p) => p.completedAt - p.startedAt)),
    pageTurnaroundMs: median(turnarounds),
    runs,
  };
}
