import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type * as activities from '../activities/visitors-export';
import { getProgressQuery } from '../contract/messages';
import { DocsProjectIdKey } from '../contract/names';
import { InputValidationError, parseOrThrow } from '../contract/validation';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  visitorsExportInputSchema,
  type ExportProgress,
  type VisitorsExportContinuation,
  type VisitorsExportInput,
  type VisitorsExportResult,
  type VisitorTotals,
} from '../contract/visitors-export';
import { previousDayRange } from './visitors-export/scheduled-range';

type ExportActivities = ReturnType<typeof activities.createVisitorsExportActivities>;

const { fetchVisitorsPage } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '60s',
  heartbeatTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 },
});

const { mergeVisitorsExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '60s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

const ScheduledStartTimeKey = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);
const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 1000;

export const VisitorsExportFailureType = {
  invalidInput: 'InvalidInput',
  pageFailed: 'VisitorsExportPageFailed',
} as const;

/**
 * Exports a project's unique visitors for a date range: keeps `concurrency` page activities in flight over
 * offsets 0, L, 2L... until the first page without `hasMore`, stages rows on disk, then merges them.
 */
export async function visitorsExport(rawInput: VisitorsExportInput): Promise<VisitorsExportResult> {
  const input = validate(rawInput);
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const concurrency = input.concurrency ?? DEFAULT_CONCURRENCY;
  const format = input.format ?? 'csv';
  const info = workflowInfo();
  const state: VisitorsExportContinuation = input.continuation ?? {
    ...resolveRange(input),
    exportKey: `${info.workflowId}/${info.firstExecutionRunId}`,
    nextOffset: 0,
    pagesDone: 0,
    rowsDone: 0,
    totals: null,
    totalsMismatch: false,
    attempt: 1,
  };
  upsertSearchAttributes([{ key: DocsProjectIdKey, value: input.projectId }]);

  let inFlight = 0;
  let completions = 0;
  let done = false;
  const progress = (): ExportProgress => ({
    pagesDone: state.pagesDone,
    rowsDone: state.rowsDone,
    inFlight,
    done,
  });
  setHandler(getProgressQuery, progress);
  const showProgress = (): void =>
    setCurrentDetails(
      `**Export** ${input.projectId} ${state.dateFrom} → ${state.dateTo} (exclusive)\n\n` +
        `pages done: ${state.pagesDone} · rows: ${state.rowsDone} · in flight: ${inFlight}${done ? ' · **done**' : ''}`,
    );
  showProgress();

  // Offset of the first page whose hasMore is false: nothing beyond it is issued or kept.
  let lastOffset = Infinity;
  const finished = new Map<number, activities.PageSummary>();
  let failure: ApplicationFailure | undefined;
  const eventLimit = input.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  const shouldContinueAsNew = (): boolean =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= eventLimit;

  const launch = (offset: number): void => {
    inFlight += 1;
    fetchVisitorsPage({
      exportKey: state.exportKey,
      projectId: input.projectId,
      dateFrom: state.dateFrom,
      dateTo: state.dateTo,
      offset,
      limit: pageSize,
    }).then(
      (page) => {
        inFlight -= 1;
        completions += 1;
        finished.set(offset, page);
        if (!page.hasMore) lastOffset = Math.min(lastOffset, offset);
      },
      (error: unknown) => {
        inFlight -= 1;
        completions += 1;
        failure ??= pageFailure(offset, error);
      },
    );
  };

  // Pages are counted in offset order, so the continuation only needs the next offset to count.
  const absorbFinished = (): void => {
    for (
      let page = finished.get(state.pagesDone * pageSize);
      page;
      page = finished.get(state.pagesDone * pageSize)
    ) {
      finished.delete(page.offset);
      if (page.offset > lastOffset) break;
      state.pagesDone += 1;
      state.rowsDone += page.rows;
      if (state.totals === null) state.totals = page.totals;
      else if (!sameTotals(state.totals, page.totals)) state.totalsMismatch = true;
    }
    showProgress();
  };

  let issuing = true;
  while (true) {
    while (issuing && !failure && inFlight < concurrency && state.nextOffset <= lastOffset) {
      if (shouldContinueAsNew()) {
        issuing = false;
        break;
      }
      launch(state.nextOffset);
      state.nextOffset += pageSize;
    }
    if (inFlight === 0) break;
    const seen = completions;
    await condition(() => completions !== seen);
    absorbFinished();
    if (failure) throw failure;
  }
  absorbFinished();

  const complete = state.pagesDone * pageSize > lastOffset;
  if (!complete) {
    // Only in-order pages were counted; restart from the first uncounted offset in the next run.
    state.nextOffset = state.pagesDone * pageSize;
    await condition(allHandlersFinished);
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: state });
  }

  if (state.totalsMismatch && input.retryOnTotalsMismatch && state.attempt === 1) {
    log.warn('Pages disagreed on totals; running the whole export once more', { projectId: input.projectId });
    return continueAsNew<typeof visitorsExport>({
      ...rawInput,
      continuation: {
        ...state,
        exportKey: `${state.exportKey}/attempt-2`,
        nextOffset: 0,
        pagesDone: 0,
        rowsDone: 0,
        totals: null,
        totalsMismatch: false,
        attempt: 2,
      },
    });
  }

  const totals = state.totals ?? { human: 0, ai: 0, total: 0 };
  const merged = await mergeVisitorsExport({
    exportKey: state.exportKey,
    projectId: input.projectId,
    dateFrom: state.dateFrom,
    dateTo: state.dateTo,
    pageSize,
    pages: state.pagesDone,
    expectedRows: state.rowsDone,
    totals,
    format,
    workflowId: info.workflowId,
    runId: info.runId,
  });
  const warnings = [...merged.warnings];
  if (state.totalsMismatch)
    warnings.unshift("site-wide totals differed between pages; totals.json holds the first page's");
  if (totals.total < Math.max(totals.human, totals.ai) || totals.total > totals.human + totals.ai) {
    warnings.push(`totals break max(human, ai) <= total <= human + ai: ${JSON.stringify(totals)}`);
  }
  done = true;
  showProgress();
  await condition(allHandlersFinished);
  return {
    projectId: input.projectId,
    dateFrom: state.dateFrom,
    dateTo: state.dateTo,
    totals,
    rows: merged.rows,
    pages: state.pagesDone,
    files: merged.files,
    warnings,
  };
}

function validate(rawInput: VisitorsExportInput): VisitorsExportInput {
  try {
    return parseOrThrow(visitorsExportInputSchema, rawInput, 'visitorsExport input') as VisitorsExportInput;
  } catch (error) {
    if (error instanceof InputValidationError) {
      throw ApplicationFailure.create({
        message: error.message,
        type: VisitorsExportFailureType.invalidInput,
        nonRetryable: true,
        details: [error.issues],
      });
    }
    throw error;
  }
}

function resolveRange(input: VisitorsExportInput): { dateFrom: string; dateTo: string } {
  if (input.dateFrom !== undefined && input.dateTo !== undefined) {
    return { dateFrom: input.dateFrom, dateTo: input.dateTo };
  }
  const nominal = workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey);
  if (nominal === undefined) {
    throw ApplicationFailure.create({
      message:
        'Invalid visitorsExport input: dateFrom, dateTo: are required unless the run is started by a schedule',
      type: VisitorsExportFailureType.invalidInput,
      nonRetryable: true,
    });
  }
  return previousDayRange(nominal, input.timeZone ?? 'UTC');
}

function sameTotals(a: VisitorTotals, b: VisitorTotals): boolean {
  return a.human === b.human && a.ai === b.ai && a.total === b.total;
}

function pageFailure(offset: number, error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return ApplicationFailure.create({
    message: `visitors page at offset ${offset} failed: ${message}`,
    type: VisitorsExportFailureType.pageFailed,
    nonRetryable: true,
    ...(cause instanceof Error ? { cause } : {}),
  });
}
