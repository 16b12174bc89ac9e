import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createVisitorsExportActivities } from '../../activities/visitors-export';
import { parseDuration } from '../../contract/duration';
import { getProgressQuery } from '../../contract/messages';
import { DocsProjectIdKey } from '../../contract/names';
import type {
  ExportProgress,
  PageSummary,
  VisitorsExportContinuation,
  VisitorsExportInput,
  VisitorsExportResult,
} from '../../contract/visitors-export';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_EXPORT_DEADLINE,
  DEFAULT_EXPORT_FORMAT,
  DEFAULT_PAGE_SIZE,
  VisitorsExportFailureType,
} from '../../contract/visitors-export-constants';
import { dayStart } from '../../contract/zone-days';
import { BudgetPermits, clockTime } from '../budget/permits';
import { CONTINUE_AS_NEW_AFTER_EVENTS, continueAsNewDue } from '../continue-as-new';
import { invalidInputOf } from '../input-check';
import { checkPages, countPage, totalsWarnings } from './page-checks';
import { fetchPageRun, fetchPages } from './pages';

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

/** Heartbeating too: a worker that dies mid-probe or mid-removal holds the export up 15 s, not 5 minutes. */
const { prepareVisitorsExportStaging, removeVisitorsExportStaging } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
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
export async function visitorsExport(input: VisitorsExportInput): Promise<VisitorsExportResult> {
  // getProgress answers while the input is checked, with what a continued run carries.
  const { pagesDone = 0, rowsDone = 0 } = input.continuation ?? {};
  setHandler(getProgressQuery, () => ({ pagesDone, rowsDone, inFlight: 0, done: false }));
  await refuseInvalidInput('visitorsExport', input);
  // Dates with a zone name that zone's days: the folder and the result say so (UTC keeps the bare dates).
  const dayZone = input.timeZone === 'UTC' ? undefined : input.timeZone;
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const format = input.format ?? DEFAULT_EXPORT_FORMAT;
  const state = input.continuation ?? firstRunState(input);
  const { projectId } = input;
  if (workflowInfo().typedSearchAttributes.get(DocsProjectIdKey) !== projectId) {
    upsertSearchAttributes([{ key: DocsProjectIdKey, value: projectId }]);
  }
  const progress = reportProgress(
    `**Visitors export** ${projectId} · ${state.dateFrom} → ${state.dateTo} (exclusive)`,
    { pagesDone: state.pagesDone, rowsDone: state.rowsDone },
  );

  const eventLimit = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.visitorsExport;
  state.deadlineAt ??= Date.now() + (parseDuration(input.deadline ?? DEFAULT_EXPORT_DEADLINE) ?? 0);
  const permits: BudgetPermits = new BudgetPermits(
    'analytics',
    { projectId, deadlineAt: state.deadlineAt },
    () => progress.update({ waitingForBudgetUntil: permits.waitingUntil }),
  );
  const pageRequest = (offset: number) => ({
    exportKey: state.exportKey,
    projectId,
    dateFrom: state.requestRange?.dateFrom ?? state.dateFrom,
    dateTo: state.requestRange?.dateTo ?? state.dateTo,
    offset,
    limit: pageSize,
  });
  let outcome;
  try {
    outcome = await removingStagingOnFailure(state.exportKey, async () => {
      const destination = await prepareVisitorsExportStaging(state.exportKey);
      progress.update({ destination });
      const ended = await fetchPages({
        firstOffset: state.pagesDone * pageSize,
        pageSize,
        concurrency: input.concurrency ?? DEFAULT_CONCURRENCY,
        permits,
        request: pageRequest,
        shouldPause: () => continueAsNewDue(eventLimit),
        onPage: (page) => countPage(state, page, pageSize),
        onInFlight: (inFlight) =>
          progress.update({ pagesDone: state.pagesDone, rowsDone: state.rowsDone, inFlight }),
      });
      if (ended.kind === 'end') {
        // Re-reads are staged as chunks of their own, named after every attempt of the pages they replace.
        const reread = async (offset: number, round: number) =>
          (await fetchPageRun(permits, pageRequest(offset), { pages: 1, firstAttempt: round * 1_000_000 }))
            .pages[0] as PageSummary;
        await checkPages(state, pageSize, ended, reread);
      }
      return ended;
    });
  } catch (error) {
    // A failed or cancelled export gives what is left of its permits back to the budget too.
    await permits.giveBack();
    throw error;
  }
  // What is left of the permits goes back to the budget beside the merge, or before the export goes on.
  const givenBack = permits.giveBack();
  if (outcome.kind === 'paused') {
    await givenBack;
    await condition(allHandlersFinished);
    return continueAsNew<typeof visitorsExport>({ ...input, continuation: state });
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
      requestRange: state.requestRange,
      timeZone: dayZone,
      partial: input.partial,
      workflowId: info.workflowId,
      runId: info.runId,
    }).finally(() => givenBack),
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

function firstRunState(input: VisitorsExportInput): VisitorsExportContinuation {
  // With a zone the dates are days of that zone (the input check made sure they are days).
  const { dateFrom, dateTo, timeZone } = input;
  const requestRange = timeZone === undefined ? undefined : zoneRange(dateFrom, dateTo, timeZone);
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

/**
 * The range to send for the calendar days [dateFrom, dateTo) of `timeZone` when either end is not at offset
 * +00:00 (the service reads a bare date as midnight UTC): the first instant of each day as a date-time with the
 * zone's offset (a DST day is 23 or 25 hours long); undefined when the bare dates say it.
 */
export function zoneRange(dateFrom: string, dateTo: string, timeZone: string) {
  const [from, to] = [dayStart(dateFrom, timeZone).text, dayStart(dateTo, timeZone).text];
  return from.endsWith('+00:00') && to.endsWith('+00:00') ? undefined : { dateFrom: from, dateTo: to };
}

/** A bad field of the input fails the run: non-retryable InvalidInput, its issues as details. */
export async function refuseInvalidInput(
  workflow: 'visitorsExport' | 'visitorsNightly',
  input: unknown,
): Promise<void> {
  const refusal = await invalidInputOf(workflow, input);
  if (refusal === null) return;
  const { message, issues } = refusal;
  const type = VisitorsExportFailureType.invalidInput;
  throw ApplicationFailure.create({ message, type, nonRetryable: true, details: [issues] });
}

/**
 * Answers the `getProgress` query and keeps the same numbers as the workflow's current details in the UI;
 * `waitingForBudgetUntil` is given in ms since the epoch, null when no page waits for the budget.
 */
function reportProgress(heading: string, initial: Pick<ExportProgress, 'pagesDone' | 'rowsDone'>) {
  const progress: ExportProgress = { ...initial, inFlight: 0, done: false };
  setHandler(getProgressQuery, () => ({ ...progress }));
  const update = (
    changes: Partial<Omit<ExportProgress, 'waitingForBudgetUntil'>> & {
      waitingForBudgetUntil?: number | null;
    },
  ): void => {
    const { waitingForBudgetUntil: waiting, ...counts } = changes;
    Object.assign(progress, counts);
    if (waiting === null) delete progress.waitingForBudgetUntil;
    else if (waiting !== undefined) progress.waitingForBudgetUntil = new Date(waiting).toISOString();
    const p = progress;
    setCurrentDetails(
      `${heading}\n\n**Pages done:** ${p.pagesDone} · **Rows:** ${p.rowsDone} · **In flight:** ${p.inFlight}` +
        (p.done ? ' · **Done**' : '') +
        (p.waitingForBudgetUntil === undefined || p.done
          ? ''
          : `\n\n**Waiting for budget** until ${clockTime(Date.parse(p.waitingForBudgetUntil))} (the organization's analytics budget is shared by every export)`),
    );
  };
  update({});
  return { update };
}
