import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  patched,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PageSummary } from '../../activities/visitors-export';
import type { PageRequest } from '../../activities/visitors-export';
import { parseDuration } from '../../contract/duration';
import { DocsProjectIdKey } from '../../contract/names';
import type {
  VisitorsExportContinuation,
  VisitorsExportInput,
  VisitorsExportResult,
} from '../../contract/visitors-export';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_EXPORT_DEADLINE,
  DEFAULT_PAGE_SIZE,
} from '../../contract/visitors-export-constants';
import {
  fetchVisitorsPage,
  mergeVisitorsExport,
  mergeVisitorsExportTakenOverSooner,
  prepareVisitorsExportStaging,
  removeVisitorsExportStaging,
} from './activity-proxies';
import type { BudgetRefusal } from '../../contract/budget';
import type { PermitGrant } from '../../contract/budget';
import { BudgetPermits } from '../budget/permits';
import { PagePermits } from './page-permits';
import { fetchPageWithinBudget } from './budgeted-page';
import { resolveRange, scheduledNominalTime, scheduleIdOfRun, validateInput } from './input';
import { nightlyExport } from './nightly';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import { PageWindow, type PageWindowOutcome } from './page-window';
import { fetchPagesAdaptively } from './adaptive-pages';
import { ProgressReporter } from './progress';
import { countPage, totalsWarnings } from './page-counts';

/** Half of the 2 MB bound: rows never enter history, so this is a safety net, not the usual trigger. */
const CONTINUE_AS_NEW_AFTER_BYTES = 1024 * 1024;

/**
 * Exports a project's unique visitors for a date range: fans out over offset pages, stages their rows on disk,
 * merges them in offset order into one file with totals.json and manifest.json. Only counts enter history;
 * long exports continue as new, carrying counts and the next offset.
 */
export async function visitorsExport(rawInput: VisitorsExportInput): Promise<VisitorsExportResult> {
  // Decided before the first await (the input check's local activity): on replay, a patch asked for after it
  // would meet its marker out of turn. Runs recorded before budgets fetch pages with the activity's own retries
  // and a fixed fan-out.
  const withinBudget = patched(BUDGETS_PATCH);
  const adaptive = withinBudget && patched(ADAPTIVE_WINDOW_PATCH);
  const blocks = adaptive && patched(PAGE_BLOCKS_PATCH);
  const merge = patched(MERGE_HEARTBEAT_PATCH) ? mergeVisitorsExportTakenOverSooner : mergeVisitorsExport;
  // A scheduled run without dates catches up on every day after the watermark; runs recorded before the
  // watermark exported the one day before their nominal time themselves.
  const nominalTime = isDateless(rawInput) ? scheduledNominalTime() : undefined;
  const nightly = nominalTime !== undefined && patched(NIGHTLY_WATERMARK_PATCH);
  const input = await validateInput(rawInput);
  if (nightly) return nightlyExport(input, { nominalTime, scheduleId: scheduleIdOfRun() });
  // Dates with a zone name that zone's days: the folder and the result say so (UTC keeps the bare dates).
  const dayZone =
    input.dateFrom !== undefined && input.timeZone !== undefined && input.timeZone !== 'UTC'
      ? input.timeZone
      : undefined;
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const format = input.format ?? 'csv';
  const state = input.continuation ?? firstRunState(input);
  const { projectId } = input;
  if (workflowInfo().typedSearchAttributes.get(DocsProjectIdKey) !== projectId) {
    upsertSearchAttributes([{ key: DocsProjectIdKey, value: projectId }]);
  }
  const progress = new ProgressReporter(
    `**Visitors export** ${projectId} · ${state.dateFrom} → ${state.dateTo} (exclusive)` +
      (state.attempt > 1 ? ' · second attempt' : ''),
    { pagesDone: state.pagesDone, rowsDone: state.rowsDone },
  );

  const eventLimit = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.visitorsExport;
  if (withinBudget) state.deadlineAt ??= Date.now() + deadlineMs(input);
  const permits = withinBudget
    ? new BudgetPermits('analytics', () => progress.update({ waitingForBudgetUntil: permits?.waitingUntil }))
    : undefined;
  const pageRequest = (offset: number): PageRequest => ({
    exportKey: state.exportKey,
    projectId,
    dateFrom: state.requestRange?.dateFrom ?? state.dateFrom,
    dateTo: state.requestRange?.dateTo ?? state.dateTo,
    offset,
    limit: pageSize,
  });
  const concurrency = input.concurrency ?? DEFAULT_CONCURRENCY;
  const deadlineAt = state.deadlineAt ?? Infinity;
  const pagePermits =
    permits && adaptive ? new PagePermits(permits, projectId, deadlineAt, concurrency) : undefined;
  const takePermit =
    permits &&
    ((refusal: BudgetRefusal | undefined): Promise<PermitGrant> =>
      pagePermits
        ? pagePermits.take(refusal)
        : permits.acquire({ projectId, deadlineAt, ...(refusal === undefined ? {} : { refusal }) }));
  const countAndShow = (page: PageSummary): void => {
    countPage(state, page, pageSize);
    progress.update({ pagesDone: state.pagesDone, rowsDone: state.rowsDone });
  };
  const firstOffset = state.pagesDone * pageSize;
  const shouldPause = (): boolean => continueAsNewDue(eventLimit);
  const fetchPages = (): Promise<PageWindowOutcome> => {
    if (blocks && pagePermits) {
      return fetchPagesAdaptively({
        firstOffset,
        pageSize,
        concurrency,
        permits: pagePermits,
        pageRequest,
        shouldPause,
        onPage: countAndShow,
        onChange: (inFlight) => progress.update({ inFlight }),
      });
    }
    const window: PageWindow = new PageWindow({
      firstOffset,
      pageSize,
      concurrency,
      slowStart: withinBudget,
      ...(pagePermits ? { aheadOfFullPage: () => (pagePermits.open ? concurrency : 2) } : {}),
      fetchPage: (offset) =>
        takePermit
          ? fetchPageWithinBudget(takePermit, pageRequest(offset))
          : fetchVisitorsPage(pageRequest(offset)),
      shouldPause,
      onPage: (page) => countPage(state, page, pageSize),
      onChange: () =>
        progress.update({ pagesDone: state.pagesDone, rowsDone: state.rowsDone, inFlight: window.inFlight }),
    });
    return window.run();
  };
  const outcome = await removingStagingOnFailure(state.exportKey, async () => {
    // Runs recorded before it returned the destination got nothing: only the query's answer differs.
    const destination: unknown = await prepareVisitorsExportStaging(state.exportKey);
    if (typeof destination === 'string') progress.update({ destination });
    return fetchPages();
  });

  // What is left of the permits goes back to the budget while the export merges (or before it continues).
  const givingBack = blocks && pagePermits ? pagePermits.release() : Promise.resolve();
  if (outcome.kind === 'paused') {
    await givingBack;
    await condition(allHandlersFinished);
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: state });
  }
  if (state.totalsMismatch && input.retryOnTotalsMismatch === true && state.attempt === 1) {
    log.warn('Pages disagreed on the site-wide totals: running the whole export once more', { projectId });
    await removeStaging(state.exportKey);
    await givingBack;
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: secondAttempt(state) });
  }

  const totals = state.totals ?? { human: 0, ai: 0, total: 0 };
  const warnings = [...state.warnings, ...totalsWarnings(state, totals)];
  const info = workflowInfo();
  const merged = await removingStagingOnFailure(state.exportKey, () =>
    merge({
      exportKey: state.exportKey,
      projectId,
      dateFrom: state.dateFrom,
      dateTo: state.dateTo,
      pageSize,
      pages: state.pagesDone,
      expectedRows: state.rowsDone,
      totals,
      format,
      warnings,
      ...(state.requestRange === undefined ? {} : { requestRange: state.requestRange }),
      ...(dayZone === undefined ? {} : { timeZone: dayZone }),
      workflowId: info.workflowId,
      runId: info.runId,
    }),
  );
  await removeStaging(state.exportKey);
  await givingBack;
  progress.update({ inFlight: 0, done: true });
  await condition(allHandlersFinished);
  return {
    projectId,
    dateFrom: state.dateFrom,
    dateTo: state.dateTo,
    ...(dayZone === undefined ? {} : { timeZone: dayZone }),
    totals,
    rows: merged.rows,
    pages: state.pagesDone,
    files: merged.files,
    warnings: [...warnings, ...merged.warnings],
  };
}

/** Pages take permits from the organization's analytics budget; slow start; the workflow retries pages. */
const BUDGETS_PATCH = 'analytics-budget';
/** Scheduled runs without dates export every day after the project's watermark (one child export per day). */
const NIGHTLY_WATERMARK_PATCH = 'nightly-watermark';

function isDateless(input: VisitorsExportInput): boolean {
  return input.dateFrom === undefined && input.dateTo === undefined && input.continuation === undefined;
}

/** The window opens to `concurrency` while the budget has room; permits come in batches ahead of the pages. */
const ADAPTIVE_WINDOW_PATCH = 'adaptive-page-window';
/** While the budget has room, blocks of pages in one activity each (fetchPagesAdaptively), not one per page. */
const PAGE_BLOCKS_PATCH = 'export-page-blocks';
/** The merge's heartbeat timeout is 15 s (it beats every 5 s while it uploads) instead of a minute. */
const MERGE_HEARTBEAT_PATCH = 'merge-heartbeat-15s';

function deadlineMs(input: VisitorsExportInput): number {
  return parseDuration(input.deadline ?? DEFAULT_EXPORT_DEADLINE) ?? 0;
}

function firstRunState(input: VisitorsExportInput): VisitorsExportContinuation {
  const { dateFrom, dateTo, requestRange, warning } = resolveRange(input);
  const info = workflowInfo();
  return {
    // Stable across continue-as-new, distinct for every new run of the same range.
    exportKey: `${info.workflowId}/${info.firstExecutionRunId}`,
    dateFrom,
    dateTo,
    ...(requestRange === undefined ? {} : { requestRange }),
    pagesDone: 0,
    rowsDone: 0,
    totals: null,
    totalsMismatch: false,
    attempt: 1,
    warnings: warning === undefined ? [] : [warning],
  };
}

function secondAttempt(first: VisitorsExportContinuation): VisitorsExportContinuation {
  return {
    ...first,
    exportKey: `${first.exportKey}/attempt-2`,
    pagesDone: 0,
    rowsDone: 0,
    totals: null,
    totalsMismatch: false,
    attempt: 2,
    warnings: [
      ...first.warnings.filter((w) => w.startsWith('scheduled run')),
      'pages disagreed on the site-wide totals in the first attempt: the whole export was run again',
    ],
  };
}

function continueAsNewDue(eventLimit: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength >= eventLimit ||
    info.historySize >= CONTINUE_AS_NEW_AFTER_BYTES
  );
}

/** A failed or cancelled export removes its staged pages before it ends. */
async function removingStagingOnFailure<T>(exportKey: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await removeStaging(exportKey);
    throw error;
  }
}

/**
 * Cleanup never fails an export, nor is it skipped when the export is being cancelled; what it leaves behind
 * is pruned after a week by a later cleanup.
 */
async function removeStaging(exportKey: string): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() => removeVisitorsExportStaging(exportKey));
  } catch (error) {
    log.warn('Could not remove the staged pages', { exportKey, error });
  }
}
