import {
  ChildWorkflowFailure,
  executeChild,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  upsertMemo,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { getProgressQuery } from '../../contract/messages';
import { DocsProjectIdKey, visitorsExportWorkflowId, WorkflowType } from '../../contract/names';
import {
  coveredOfMemo,
  DEFAULT_MAX_CATCH_UP_DAYS,
  exportLabel,
  memoCovered,
  mergeCovered,
  type NightlyDay,
  type NightlyExport,
  type VisitorsNightlyResult,
} from '../../contract/nightly';
import type { NightlyRunMemo, VisitorsNightlyInput } from '../../contract/nightly-schema';
import type { VisitorsExportInput, VisitorsExportResult } from '../../contract/visitors-export';
import { recordNightlyRun } from '../metrics';
import { scheduledNominalTime, scheduleIdOfRun } from '../scheduled-run';
import { refuseInvalidInput } from '../visitors-export/workflow';
import type { createNightlyActivities } from '../../activities/nightly';

type NightlyActivities = ReturnType<typeof createNightlyActivities>;

/** Reading the destination's manifests (and the schedule's zone): a few attempts, then the run fails saying so. */
const { planNightlyExport } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * Waiting for a day's export that another run started: as long as that export may take (its deadline is a day),
 * heartbeating, so a dead worker is noticed after 30 s and the wait goes on elsewhere.
 */
const { awaitDayExport } = proxyActivities<NightlyActivities>({
  startToCloseTimeout: '25 hours',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

type Outcome = { result: VisitorsExportResult; found: boolean } | { error: string };

/**
 * What a nightly schedule starts: the days due (docs/nightly.md), oldest first, one `visitorsExport` child each
 * under the day's own id, so each day is exported once whatever runs overlap. A day that fails is reported and
 * the later days are exported all the same: it has no whole export, so the next run exports it again.
 */
export async function visitorsNightly(input: VisitorsNightlyInput): Promise<VisitorsNightlyResult> {
  await refuseInvalidInput('visitorsNightly', input);
  const { projectId, maxCatchUpDays: _cap, timeZone: _zone, ...exportOptions } = input;
  const progress = { pagesDone: 0, rowsDone: 0, inFlight: 0, done: false };
  setHandler(getProgressQuery, () => ({ ...progress }));
  const scheduleId = scheduleIdOfRun();
  const plan = await planNightlyExport({
    projectId,
    ...(input.timeZone === undefined ? {} : { timeZone: input.timeZone }),
    ...(scheduleId === undefined ? {} : { scheduleId }),
    nominalTime: (scheduledNominalTime() ?? workflowInfo().startTime).toISOString(),
    maxDays: input.maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS,
  });
  const { timeZone, through, olderExports } = plan;
  const memo: NightlyRunMemo = { timeZone, through, covered: plan.covered, olderExports, failed: [] };
  upsertMemo({ ...memo });
  const results: VisitorsExportResult[] = [];
  const days: NightlyDay[] = [];
  const done: NightlyExport[] = [];
  for (const item of plan.exports) {
    const day = exportLabel(item);
    const workflowId = visitorsExportWorkflowId(projectId, item.dateFrom, item.dateTo, item.timeZone);
    const { from: _from, to: _to, ...range } = item;
    const outcome = await exportOnce(workflowId, { projectId, ...exportOptions, ...range }, item);
    if ('error' in outcome) {
      days.push({ day, status: 'failed', workflowId, error: outcome.error });
      log.warn('A nightly export failed: the later ones go on, the next run makes it again', {
        projectId,
        day,
        error: outcome.error,
      });
      continue;
    }
    done.push(item);
    results.push(outcome.result);
    progress.pagesDone += outcome.result.pages;
    progress.rowsDone += outcome.result.rows;
    days.push({ day, status: outcome.found ? 'found-exported' : 'exported', workflowId });
  }

  const failed = days.flatMap((d) => (d.error === undefined ? [] : [{ day: d.day, error: d.error }]));
  const covered = mergeCovered([...coveredOfMemo(plan), ...done]);
  upsertMemo({ ...memo, covered: memoCovered(covered), failed });
  const wholeThrough = covered[0] === undefined ? null : new Date(covered[0].to).toISOString();
  recordNightlyRun(projectId, timeZone, done.length);
  const warnings = [...plan.warnings];
  for (const { day, error } of failed) {
    warnings.push(`${day} failed: ${error} (later days were exported; the next run exports ${day} again)`);
  }
  if (plan.remaining > 0) {
    warnings.push(`${plan.remaining} day(s) up to ${through} still due: the next runs export them`);
  }
  progress.done = true;
  return {
    projectId,
    timeZone,
    timeZoneFrom: plan.timeZoneFrom,
    through,
    exported: days.filter((d) => d.status !== 'failed').map((d) => d.day),
    failed,
    days,
    wholeThrough,
    remaining: plan.remaining,
    totals: {
      human: sum(results, (r) => r.totals.human),
      ai: sum(results, (r) => r.totals.ai),
      total: sum(results, (r) => r.totals.total),
    },
    rows: sum(results, (r) => r.rows),
    pages: sum(results, (r) => r.pages),
    files: results.flatMap((r) => r.files),
    warnings: [...results.flatMap((r) => r.warnings), ...warnings],
  };
}

/**
 * Exports a day (or range) under its own id, once: a running export under that id (another run's, a backfill's)
 * is awaited, and one found completed counts if its whole export is at the destination. A failed one, or a
 * completed one whose export is gone, is run again, once.
 */
async function exportOnce(
  workflowId: string,
  input: VisitorsExportInput,
  item: NightlyExport,
): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await executeChild<(input: VisitorsExportInput) => Promise<VisitorsExportResult>>(
        WorkflowType.visitorsExport,
        {
          workflowId,
          args: [input],
          // First a completed export under the id is only found (two runs at once export a day once); once the
          // destination shows it gone, it is run again.
          workflowIdReusePolicy:
            attempt === 1
              ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
              : WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          // The export finishes even if this run is terminated: the next run finds it done.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: [{ key: DocsProjectIdKey, value: input.projectId }],
          staticSummary: `Nightly visitors export ${input.projectId} ${exportLabel(input)}`,
        },
      );
      return { result, found: false };
    } catch (error) {
      if (error instanceof ChildWorkflowFailure) return { error: (error.cause ?? error).message };
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    const found = await awaitDayExport(workflowId, item);
    if ('result' in found) return { result: found.result, found: true };
    if (attempt >= 2) return found;
  }
}

function sum(results: VisitorsExportResult[], value: (result: VisitorsExportResult) => number): number {
  return results.reduce((total, result) => total + value(result), 0);
}
