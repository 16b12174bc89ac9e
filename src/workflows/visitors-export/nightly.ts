import {
  executeChild,
  log,
  ParentClosePolicy,
  setHandler,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { getProgressQuery } from '../../contract/messages';
import { DocsProjectIdKey, visitorsExportWorkflowId, WorkflowType } from '../../contract/names';
import { DEFAULT_MAX_CATCH_UP_DAYS } from '../../contract/nightly';
import type { VisitorsExportInput, VisitorsExportResult } from '../../contract/visitors-export';
import { addDays } from '../../contract/zone-days';
import { advanceNightlyWatermark, dayExportStatus, planNightlyExport } from './activity-proxies';
import type { visitorsExport } from './workflow';

/**
 * A scheduled run without dates: exports every day of the zone after the watermark up to the day before its
 * nominal time, oldest first, one child export per day with the day's own id (the id a manual export of that day
 * has), and moves the watermark over each day once it is whole. A day whose export already completed (another
 * run's, a backfill's) is counted without a request; a day another run is exporting ends this run's catch-up
 * there (that run, or the next night, carries on). A day that fails fails this run: the watermark stays before it,
 * and the next run exports it again.
 */
export async function nightlyExport(
  input: VisitorsExportInput,
  schedule: { nominalTime: Date; scheduleId: string | undefined },
): Promise<VisitorsExportResult> {
  const { projectId } = input;
  const progress = { pagesDone: 0, rowsDone: 0, inFlight: 0, done: false };
  setHandler(getProgressQuery, () => ({ ...progress }));
  const plan = await planNightlyExport({
    projectId,
    ...(input.timeZone === undefined ? {} : { timeZone: input.timeZone }),
    ...(schedule.scheduleId === undefined ? {} : { scheduleId: schedule.scheduleId }),
    nominalTime: schedule.nominalTime.toISOString(),
    maxDays: input.maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS,
  });
  const { timeZone } = plan;
  const results: VisitorsExportResult[] = [];
  const exported: string[] = [];
  const warnings: string[] = [];
  let watermark = plan.watermark;
  let remaining = plan.remaining;
  for (const [index, day] of plan.days.entries()) {
    const dateTo = addDays(day, 1);
    const workflowId = visitorsExportWorkflowId(projectId, day, dateTo, timeZone);
    try {
      const result = await executeChild<typeof visitorsExport>(WorkflowType.visitorsExport, {
        workflowId,
        args: [dayInput(input, day, dateTo, timeZone)],
        // A completed export of the day is never run again by a nightly run; a failed one is.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        // The day's export finishes even if this run is terminated: the next run finds it completed.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [{ key: DocsProjectIdKey, value: projectId }],
        staticSummary: `Nightly visitors export ${projectId} ${day} (${timeZone})`,
      });
      results.push(result);
      progress.pagesDone += result.pages;
      progress.rowsDone += result.rows;
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      const status = await dayExportStatus(workflowId);
      if (status !== 'COMPLETED') {
        remaining += plan.days.length - index;
        warnings.push(`${day} is being exported by ${workflowId} (${status}): this run stops there`);
        break;
      }
      log.info('Day already exported whole: counted without a request', { projectId, day, workflowId });
    }
    exported.push(day);
    ({ watermark } = await advanceNightlyWatermark({ projectId, timeZone, day }));
  }
  if (remaining > 0) {
    warnings.push(`${remaining} day(s) up to ${plan.through} still due: the next runs export them`);
    log.warn('Nightly catch-up left days for the next runs', { projectId, timeZone, watermark, remaining });
  }
  progress.done = true;
  const first = exported[0] ?? addDays(watermark ?? plan.through, 1);
  const last = exported.at(-1);
  return {
    projectId,
    dateFrom: first,
    dateTo: last === undefined ? first : addDays(last, 1),
    ...(timeZone === 'UTC' ? {} : { timeZone }),
    totals: {
      human: sum(results, (r) => r.totals.human),
      ai: sum(results, (r) => r.totals.ai),
      total: sum(results, (r) => r.totals.total),
    },
    rows: sum(results, (r) => r.rows),
    pages: sum(results, (r) => r.pages),
    files: results.flatMap((r) => r.files),
    warnings: [...results.flatMap((r) => r.warnings), ...warnings],
    nightly: {
      timeZone,
      timeZoneFrom: plan.timeZoneFrom,
      through: plan.through,
      exported,
      watermark,
      remaining,
    },
  };
}

/** A day's export: the run's options, the day's dates in the zone. */
function dayInput(
  input: VisitorsExportInput,
  dateFrom: string,
  dateTo: string,
  timeZone: string,
): VisitorsExportInput {
  const { maxCatchUpDays: _cap, continuation: _none, ...options } = input;
  return { ...options, dateFrom, dateTo, timeZone };
}

function sum(results: VisitorsExportResult[], value: (result: VisitorsExportResult) => number): number {
  return results.reduce((total, result) => total + value(result), 0);
}
