import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  executeChild,
  log,
  ParentClosePolicy,
  setHandler,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { DayExportOutcome } from '../../activities/nightly';
import { getProgressQuery } from '../../contract/messages';
import { DocsProjectIdKey, visitorsExportWorkflowId, WorkflowType } from '../../contract/names';
import {
  DEFAULT_MAX_CATCH_UP_DAYS,
  NIGHTLY_WATERMARK_UNAVAILABLE,
  type FailedDay,
  type InstantRange,
  type NightlyDay,
  type NightlyWatermark,
  type VisitorsNightlyResult,
} from '../../contract/nightly';
import type { VisitorsNightlyInput } from '../../contract/nightly-schema';
import type { VisitorsExportInput, VisitorsExportResult } from '../../contract/visitors-export';
import { addDays } from '../../contract/zone-days';
import { invalidInputOf } from '../input-check';
import { scheduledNominalTime, scheduleIdOfRun } from '../scheduled-run';
import { invalidInput } from '../visitors-export/failures';
import { awaitDayExport, planNightlyExport, reportNightlyDay } from './activity-proxies';

type Outcome = { result: VisitorsExportResult; found: boolean } | { error: string };

/**
 * What a nightly schedule starts: exports every day of its zone after the watermark up to the day before its
 * nominal time, oldest first, one `visitorsExport` child per day under the day's own id, so each day is exported
 * once whatever runs overlap. A day another run is exporting is awaited, not deferred; a day that fails is
 * reported (result, warning, watermark) and the later days are exported all the same. The watermark moves only
 * over an unbroken run of whole days, so a failed day is due again on every run until it is whole.
 */
export async function visitorsNightly(input: VisitorsNightlyInput): Promise<VisitorsNightlyResult> {
  const refusal = await invalidInputOf('visitorsNightly', input);
  if (refusal !== null) throw invalidInput(refusal.message, refusal.issues);
  const { projectId } = input;
  const progress = { pagesDone: 0, rowsDone: 0, inFlight: 0, done: false };
  setHandler(getProgressQuery, () => ({ ...progress }));
  const scheduleId = scheduleIdOfRun();
  const plan = await watermarkCall(projectId, 'reading it', () =>
    planNightlyExport({
      projectId,
      ...(input.timeZone === undefined ? {} : { timeZone: input.timeZone }),
      ...(scheduleId === undefined ? {} : { scheduleId }),
      nominalTime: (scheduledNominalTime() ?? workflowInfo().startTime).toISOString(),
      maxDays: input.maxCatchUpDays ?? DEFAULT_MAX_CATCH_UP_DAYS,
    }),
  );
  const { timeZone } = plan;
  const results: VisitorsExportResult[] = [];
  const days: NightlyDay[] = [];
  const warnings: string[] = [...(plan.warnings ?? [])];
  let watermark: NightlyWatermark = plan;
  const counted = (outcome: Outcome): void => {
    if (!('result' in outcome)) return;
    results.push(outcome.result);
    progress.pagesDone += outcome.result.pages;
    progress.rowsDone += outcome.result.rows;
  };

  let bridge: VisitorsNightlyResult['bridge'];
  if (plan.bridge !== null) {
    const range: InstantRange = plan.bridge;
    const workflowId = visitorsExportWorkflowId(projectId, range.dateFrom, range.dateTo);
    const outcome = await exportOnce(workflowId, { ...exportOptions(input), ...range }, 'the zone change');
    counted(outcome);
    bridge = { ...range, workflowId, ...('error' in outcome ? { error: outcome.error } : {}) };
    if ('error' in outcome)
      warnings.push(`the hours between the zones ${range.dateFrom} → ${range.dateTo}: ${outcome.error}`);
    watermark = await watermarkCall(projectId, 'reporting the zone change', () =>
      reportNightlyDay({
        projectId,
        timeZone,
        bridge: range,
        ...('error' in outcome ? { error: outcome.error } : {}),
      }),
    );
  }

  for (const day of plan.days) {
    const dateTo = addDays(day, 1);
    const workflowId = visitorsExportWorkflowId(projectId, day, dateTo, timeZone);
    const dayInput: VisitorsExportInput = { ...exportOptions(input), dateFrom: day, dateTo, timeZone };
    const outcome = await exportOnce(workflowId, dayInput, `${day} (${timeZone})`);
    counted(outcome);
    if ('error' in outcome) {
      days.push({ day, status: 'failed', workflowId, error: outcome.error });
      log.warn('A nightly day failed: the later days go on, the next run retries it', {
        projectId,
        day,
        error: outcome.error,
      });
    } else {
      days.push({ day, status: outcome.found ? 'found-exported' : 'exported', workflowId });
    }
    watermark = await watermarkCall(projectId, `reporting ${day}`, () =>
      reportNightlyDay({ projectId, timeZone, day, ...('error' in outcome ? { error: outcome.error } : {}) }),
    );
  }

  const failed: FailedDay[] = days.flatMap((d) =>
    d.error === undefined ? [] : [{ day: d.day, error: d.error }],
  );
  for (const { day, error } of failed) {
    warnings.push(`${day} failed: ${error} (later days were exported; the next run exports ${day} again)`);
  }
  if (plan.remaining > 0) {
    warnings.push(`${plan.remaining} day(s) up to ${plan.through} still due: the next runs export them`);
  }
  progress.done = true;
  return {
    projectId,
    timeZone,
    timeZoneFrom: plan.timeZoneFrom,
    through: plan.through,
    exported: days.filter((d) => d.status !== 'failed').map((d) => d.day),
    failed,
    ...(bridge === undefined ? {} : { bridge }),
    days,
    watermark: watermark.watermark,
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
 * Exports a range under its own id, once: a completed export under that id is taken as it is, a running one
 * (another run's, a backfill's) is awaited, and a failed one is run again.
 */
async function exportOnce(workflowId: string, input: VisitorsExportInput, what: string): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await executeChild<(input: VisitorsExportInput) => Promise<VisitorsExportResult>>(
        WorkflowType.visitorsExport,
        {
          workflowId,
          args: [input],
          // A completed export is never run again by a nightly run; a failed, cancelled or terminated one is.
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
          // The export finishes even if this run is terminated: the next run finds it completed.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: [{ key: DocsProjectIdKey, value: input.projectId }],
          staticSummary: `Nightly visitors export ${input.projectId} ${what}`,
        },
      );
      return { result, found: false };
    } catch (error) {
      if (error instanceof ChildWorkflowFailure) return { error: messageOf(error.cause ?? error) };
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    const found: DayExportOutcome = await awaitDayExport(workflowId);
    if ('result' in found) return { result: found.result, found: true };
    // Another run's export of the range failed while this run waited: this run exports it again, once.
    if (attempt >= 2) return { error: found.error };
  }
}

/** A call to the watermark; one that does not answer within its bound fails the run, saying so. */
async function watermarkCall<T>(projectId: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    throw ApplicationFailure.create({
      message: `the nightly watermark of ${projectId} did not answer (${what}): ${messageOf(error.cause ?? error)}`,
      type: NIGHTLY_WATERMARK_UNAVAILABLE,
      nonRetryable: true,
      cause: error,
    });
  }
}

/** The export options a nightly run passes to each day's export. */
function exportOptions(input: VisitorsNightlyInput): Omit<VisitorsExportInput, 'dateFrom' | 'dateTo'> {
  const { maxCatchUpDays: _cap, timeZone: _zone, ...options } = input;
  return options;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sum(results: VisitorsExportResult[], value: (result: VisitorsExportResult) => number): number {
  return results.reduce((total, result) => total + value(result), 0);
}
