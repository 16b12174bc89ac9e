import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PageRequest } from '../../activities/visitors-pages';
import { parseDuration } from '../../contract/duration';
import { DocsProjectIdKey } from '../../contract/names';
import type {
  PageSummary,
  VisitorsExportContinuation,
  VisitorsExportInput,
  VisitorsExportResult,
} from '../../contract/visitors-export';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_EXPORT_DEADLINE,
  DEFAULT_PAGE_SIZE,
} from '../../contract/visitors-export-constants';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';
import { BudgetPermits } from '../budget/permits';
import { MAX_PERMITS_PER_ASK } from '../../contract/budget';
import { PagePermits } from '../budget/page-permits';
import { fetchPageRun } from './page-run';
import { getProgressQuery } from '../../contract/messages';
import { zoneDays } from '../../contract/zone-days';
import { invalidInputOf } from '../input-check';
import { invalidInput } from './failures';
import { CONTINUE_AS_NEW_AFTER_EVENTS, continueAsNewDue } from '../continue-as-new';
import { PageWindow } from './page-window';
import { ProgressReporter } from './progress';
import { checkPages, countPage, totalsWarnings } from './page-checks';

type ExportActivities = ReturnType<typeof createVisitorsExportActivities>;

/** The merge may be redone whole; another worker takes over a merge whose worker died after 15 s. */
const { mergeVisitorsExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

const { prepareVisitorsExportStaging, removeVisitorsExportStaging } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
  },
});

/**
 * Exports a project's unique visitors for a date range: offset pages in runs within the analytics budget, staged
 * under EXPORT_DIR, checked (page-checks.ts), merged in offset order into one file, totals.json and, last,
 * manifest.json. Only counts enter history; long exports continue as new.
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
    `**Visitors export** ${projectId} · ${state.dateFrom} → ${state.dateTo} (exclusive)`,
    { pagesDone: state.pagesDone, rowsDone: state.rowsDone },
  );

  const eventLimit = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.visitorsExport;
  state.deadlineAt ??= Date.now() + (parseDuration(input.deadline ?? DEFAULT_EXPORT_DEADLINE) ?? 0);
  const budget: BudgetPermits = new BudgetPermits('analytics', () =>
    progress.update({ waitingForBudgetUntil: budget.waitingUntil }),
  );
  const concurrency = input.concurrency ?? DEFAULT_CONCURRENCY;
  const permits = new PagePermits(budget, projectId, state.deadlineAt);
  // The first ask takes what the budget can spare; what the export does not spend goes back at its end.
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
      const ended = await window.run();
      if (ended.kind === 'end') {
        // Re-reads are staged as chunks of their own, named after every attempt of the pages they replace.
        const reread = async (offset: number, round: number) =>
          (await fetchPageRun(permits, pageRequest(offset), 1, 1, round * 1_000_000))[0] as PageSummary;
        await checkPages(state, pageSize, ended, reread);
      }
      return ended;
    });
  } finally {
    // What is left of the permits goes back to the budget, whether the export goes on, ends or was cancelled.
    await permits.release();
  }
  if (outcome.kind === 'paused') {
    await condition(allHandlersFinished);
    return continueAsNew<typeof visitorsExport>({ ...rawInput, continuation: state });
  }

  const totals = state.first?.totals ?? { human: 0, ai: 0, total: 0 };
  const warnings = [...state.warnings, ...totalsWarnings(totals)];
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

/** Pages a run covers while the budget has room: about RUN_TARGET_MS of them at the last run's pace. */
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

/**
 * The input checked by the contract's zod schema in a local activity (zod stays out of the sandbox); a bad field
 * fails the run (non-retryable InvalidInput). getProgress answers meanwhile with what a continued run carries.
 */
async function validateInput(raw: VisitorsExportInput): Promise<VisitorsExportInput> {
  const carried = raw.continuation;
  setHandler(getProgressQuery, () => ({
    pagesDone: typeof carried?.pagesDone === 'number' ? carried.pagesDone : 0,
    rowsDone: typeof carried?.rowsDone === 'number' ? carried.rowsDone : 0,
    inFlight: 0,
    done: false,
  }));
  const refusal = await invalidInputOf('visitorsExport', raw);
  if (refusal !== null) throw invalidInput(refusal.message, refusal.issues);
  return raw;
}

function firstRunState(input: VisitorsExportInput): VisitorsExportContinuation {
  // With a zone the dates are days of that zone (the input check made sure they are days).
  const { dateFrom, dateTo, requestRange } =
    input.timeZone === undefined
      ? { dateFrom: input.dateFrom, dateTo: input.dateTo }
      : zoneDays(input.dateFrom, input.dateTo, input.timeZone);
  const info = workflowInfo();
  return {
    // Stable across continue-as-new, distinct for every new run of the same range.
    exportKey: `${info.workflowId}/${info.firstExecutionRunId}`,
    dateFrom,
    dateTo,
    ...(requestRange === undefined ? {} : { requestRange }),
    pagesDone: 0,
    rowsDone: 0,
    first: null,
    suspects: [],
    warnings: [],
  };
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

/** Cleanup never fails an export nor is skipped by a cancel; what it leaves is pruned after a week. */
async function removeStaging(exportKey: string): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() => removeVisitorsExportStaging(exportKey));
  } catch (error) {
    log.warn('Could not remove the staged pages', { exportKey, error });
  }
}
