import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PageRequest, PageSummary } from '../../activities/visitors-pages';
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
  mergeVisitorsExport,
  prepareVisitorsExportStaging,
  removeVisitorsExportStaging,
} from './activity-proxies';
import { BudgetPermits } from '../budget/permits';
import { MAX_PERMITS_PER_ASK } from '../../contract/budget';
import { PagePermits } from '../budget/page-permits';
import { fetchPageRun } from './page-run';
import { resolveRange, validateInput } from './input';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import { PageWindow } from './page-window';
import { ProgressReporter } from './progress';
import { countPage, totalsWarnings } from './page-counts';

/** Half of the 2 MB bound: rows never enter history, so this is a safety net, not the usual trigger. */
const CONTINUE_AS_NEW_AFTER_BYTES = 1024 * 1024;

/**
 * Exports a project's unique visitors for a date range: fans out over offset pages in runs (one activity each)
 * within the organization's analytics budget, stages their rows under EXPORT_DIR, merges them in offset order into
 * one file with totals.json and manifest.json. Only counts enter history; long exports continue as new, carrying
 * counts and the next offset.
 */
export async function visitorsExport(rawInput: VisitorsExportInput): Promise<VisitorsExportResult> {
  const input = await validateInput(rawInput);
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
  state.deadlineAt ??= Date.now() + deadlineMs(input);
  const budget: BudgetPermits = new BudgetPermits('analytics', () =>
    progress.update({ waitingForBudgetUntil: budget.waitingUntil }),
  );
  const concurrency = input.concurrency ?? DEFAULT_CONCURRENCY;
  const permits = new PagePermits(budget, projectId, state.deadlineAt);
  // The first ask takes what the budget can spare (the limiter grants extras only from its spare), so that the
  // runs after the first page need not wait for another; what the export does not spend goes back at its end.
  permits.aimAt(MAX_PERMITS_PER_ASK);
  const pageRequest = (offset: number): PageRequest => ({
    exportKey: state.exportKey,
    projectId,
    dateFrom: state.requestRange?.dateFrom ?? state.dateFrom,
    dateTo: state.requestRange?.dateTo ?? state.dateTo,
    offset,
    limit: pageSize,
  });
  const pace = new RunPace(concurrency);
  const window: PageWindow = new PageWindow({
    firstOffset: state.pagesDone * pageSize,
    pageSize,
    concurrency,
    // Room for a run as wide as the concurrency, and for the requests that may land past the end.
    hasRoom: () => permits.room >= 2 * concurrency,
    runPages: () => {
      // As many as the stock holds when that is a run's worth: a run short of permits would end in a second one.
      const inHand = permits.inStock >= concurrency ? permits.inStock : permits.room - concurrency;
      const pages = pace.runPages(inHand);
      // This run's permits and the next one's.
      permits.aimAt(2 * pages);
      return pages;
    },
    runWidth: () => concurrency,
    fetchRun: (offset, pages, width) =>
      pace.time(width, () => fetchPageRun(permits, pageRequest(offset), pages, width)),
    shouldPause: () => continueAsNewDue(eventLimit),
    onPage: (page: PageSummary) => countPage(state, page, pageSize),
    onChange: () =>
      progress.update({ pagesDone: state.pagesDone, rowsDone: state.rowsDone, inFlight: window.inFlight }),
  });
  let outcome;
  try {
    outcome = await removingStagingOnFailure(state.exportKey, async () => {
      const destination = await prepareVisitorsExportStaging(state.exportKey);
      progress.update({ destination });
      return window.run();
    });
  } finally {
    // What is left of the permits goes back to the budget, whether the export goes on, ends or was cancelled.
    await permits.release();
  }
  if (outcome.kind === 'paused') {
    await condition(allHandlersFinished);
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: state });
  }
  if (state.totalsMismatch && input.retryOnTotalsMismatch === true && state.attempt === 1) {
    log.warn('Pages disagreed on the site-wide totals: running the whole export once more', { projectId });
    await removeStaging(state.exportKey);
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: secondAttempt(state) });
  }

  const totals = state.totals ?? { human: 0, ai: 0, total: 0 };
  const warnings = [...state.warnings, ...totalsWarnings(state, totals)];
  const info = workflowInfo();
  const merged = await removingStagingOnFailure(state.exportKey, () =>
    mergeVisitorsExport({
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
      ...(input.partial === true ? { partial: true as const } : {}),
      workflowId: info.workflowId,
      runId: info.runId,
    }),
  );
  await removeStaging(state.exportKey);
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
    ...(input.partial === true ? { partial: true as const } : {}),
  };
}

/** A run lasts about this long at the pace of the last one: progress moves, permits stay fresh. */
const RUN_TARGET_MS = 2_000;
/** The most pages one run covers: one ask's worth. */
const MAX_RUN_PAGES = MAX_PERMITS_PER_ASK;

/**
 * How many pages a run covers while the budget has room: about RUN_TARGET_MS of them at the last run's pace per
 * request, `concurrency` requests at a time, within the permits the export may count on. A run stops at the last
 * page of the data whatever its size, so its size costs no request past the end: at most concurrency - 1.
 */
class RunPace {
  #requestMs: number | undefined;

  constructor(private readonly concurrency: number) {}

  runPages(permits: number): number {
    const paced =
      this.#requestMs === undefined
        ? this.concurrency
        : Math.floor((RUN_TARGET_MS * this.concurrency) / Math.max(1, this.#requestMs));
    return Math.max(this.concurrency, Math.min(MAX_RUN_PAGES, paced, permits));
  }

  async time(width: number, run: () => Promise<PageSummary[]>): Promise<PageSummary[]> {
    const startedAt = Date.now();
    const pages = await run();
    if (pages.length > 0) this.#requestMs = ((Date.now() - startedAt) * width) / pages.length;
    return pages;
  }
}

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
