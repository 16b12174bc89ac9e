import { ApplicationFailure } from '@temporalio/workflow';
import type { PageSummary, VisitorsExportContinuation, VisitorTotals } from '../../contract/visitors-export';
import { VisitorsExportFailureType } from '../../contract/visitors-export-constants';

/** Pages that may disagree before the export fails without re-reading: more is a change of the data, not a glitch. */
export const MAX_SUSPECT_PAGES = 4;
/** Rounds of re-reads of the pages that still disagree. */
const REREAD_ROUNDS = 2;

/** Counts a page into the export's state, in offset order; a page that contradicts the others is a suspect. */
export function countPage(state: VisitorsExportContinuation, page: PageSummary, pageSize: number): void {
  state.pagesDone += 1;
  state.rowsDone += page.rows;
  state.first ??= page;
  const reason = disagreement(state.first, page, pageSize);
  if (reason === undefined) return;
  state.suspects.push({ ...page, reason });
  if (state.suspects.length <= MAX_SUSPECT_PAGES) return;
  const totals = totalsAfterPageZero(state, pageSize);
  if (totals === undefined) {
    throw pagesDisagree(
      state.suspects.map(({ offset, reason }) => ({ offset, reason })),
      0,
    );
  }
  // Every page after page 0 agrees, page 0 alone not: theirs are the totals, and page 0 read again at the end must
  // come back with them and with its rows unchanged.
  state.first = { ...state.first, totals };
  state.suspects = [];
}

/**
 * The totals every page counted after page 0 shares, when each of them disagrees with page 0 on its totals alone:
 * page 0's first read was a glitch, or the data changed once, just after it. Page 0 read again with its rows
 * unchanged and these totals makes the pages one snapshot of the data: rows that moved did so before any page but
 * page 0 was read, and page 0's rows did not move.
 */
function totalsAfterPageZero(state: VisitorsExportContinuation, pageSize: number): VisitorTotals | undefined {
  const [one] = state.suspects;
  if (one === undefined || state.suspects.length !== state.pagesDone - 1) return undefined;
  const totalsOnly = (page: PageSummary) =>
    !(page.hasMore && page.rows < pageSize) && sameTotals(page.totals, one.totals);
  return state.suspects.every(totalsOnly) ? one.totals : undefined;
}

/**
 * The end check, once the last page is counted: page 0 is read again (unless it is the last; the run that met the
 * end reads it beside the last pages when it holds a permit to spare: `firstAgain`) and must come back as it did
 * (rows removed or added before it change it); the page past the end must be empty (read when the last page
 * is full and it was not fetched yet); every suspect is read again, staged over the page it replaces. Those that
 * still disagree are read again, up to REREAD_ROUNDS rounds, then fail with VisitorsExportPagesDisagree.
 * At most REREAD_ROUNDS * (MAX_SUSPECT_PAGES + 2) requests; 0 to 2 when the pages agree.
 */
export async function checkPages(
  state: VisitorsExportContinuation,
  pageSize: number,
  end: { last: PageSummary; pastEnd?: PageSummary; firstAgain?: PageSummary },
  reread: (offset: number, round: number) => Promise<PageSummary>,
): Promise<void> {
  let first = state.first ?? end.last;
  const pastEnd = end.last.offset + pageSize;
  // Page 0 first: read again, it may show that it alone disagreed (totalsAfterPageZero).
  const open = new Map<number, string>(end.last.offset > 0 ? [[0, '']] : []);
  for (const page of state.suspects) open.set(page.offset, page.reason);
  if (end.pastEnd !== undefined && end.pastEnd.rows > 0)
    open.set(pastEnd, pastEndReason(end.pastEnd, end.last));
  else if (end.pastEnd === undefined && end.last.rows === pageSize) open.set(pastEnd, '');
  for (let round = 1; round <= REREAD_ROUNDS && open.size > 0; round += 1) {
    for (const offset of [...open.keys()]) {
      if (!open.has(offset)) continue;
      const page =
        round === 1 && offset === 0 && end.firstAgain !== undefined
          ? end.firstAgain
          : await reread(offset, round);
      const reason =
        page.offset === 0
          ? page.digest === first.digest && sameTotals(page.totals, first.totals)
            ? undefined
            : 'page 0 read again differs from its first read: rows were added or removed during the export'
          : page.offset > end.last.offset
            ? page.rows > 0
              ? pastEndReason(page, end.last)
              : undefined
            : page.hasMore !== page.offset < end.last.offset
              ? `page at offset ${page.offset} read again says hasMore ${page.hasMore}, the end is at ${end.last.offset}`
              : disagreement(first, page, pageSize);
      const totals =
        page.offset === 0 && reason !== undefined ? totalsAfterPageZero(state, pageSize) : undefined;
      if (totals !== undefined && page.digest === first.digest && sameTotals(page.totals, totals)) {
        first = state.first = { ...first, totals };
        for (const suspect of state.suspects) open.delete(suspect.offset);
        state.suspects = [];
        open.delete(0);
        continue;
      }
      const suspect = state.suspects.find((counted) => counted.offset === page.offset);
      if (suspect !== undefined) {
        state.rowsDone += page.rows - suspect.rows;
        Object.assign(suspect, page, { reason: reason ?? '' });
      }
      if (reason === undefined) open.delete(page.offset);
      else open.set(page.offset, reason);
    }
  }
  if (open.size > 0) {
    throw pagesDisagree(
      [...open].map(([offset, reason]) => ({ offset, reason })),
      REREAD_ROUNDS,
    );
  }
  state.suspects = [];
}

/** Pages that still contradict each other after `rounds` rounds of re-reads: the export is not final. */
function pagesDisagree(pages: { offset: number; reason: string }[], rounds: number): ApplicationFailure {
  const offsets = pages.map((page) => page.offset);
  return ApplicationFailure.create({
    message:
      `visitors pages disagree at offset(s) ${offsets.join(', ')} after ${rounds} re-read(s): ` +
      pages.map((page) => page.reason).join('; '),
    type: VisitorsExportFailureType.pagesDisagree,
    nonRetryable: true,
    details: [{ offsets, pages }],
  });
}

/** Why `page` contradicts the export's first page, or undefined. */
function disagreement(first: PageSummary, page: PageSummary, pageSize: number): string | undefined {
  if (page.hasMore && page.rows < pageSize) {
    return `page at offset ${page.offset} had ${page.rows} of ${pageSize} rows but said hasMore`;
  }
  if (!sameTotals(page.totals, first.totals)) {
    return `page at offset ${page.offset} gave totals ${JSON.stringify(page.totals)}, page 0 ${JSON.stringify(first.totals)}`;
  }
  return undefined;
}

function pastEndReason(page: PageSummary, last: PageSummary): string {
  return `page at offset ${page.offset} has ${page.rows} rows past the end that page ${last.offset} announced`;
}

/** A warning when the totals break the service's rule max(human, ai) <= total <= human + ai. */
export function totalsWarnings(totals: VisitorTotals): string[] {
  return totals.total < Math.max(totals.human, totals.ai) || totals.total > totals.human + totals.ai
    ? [`totals break max(human, ai) <= total <= human + ai: ${JSON.stringify(totals)}`]
    : [];
}

function sameTotals(a: VisitorTotals, b: VisitorTotals): boolean {
  return a.human === b.human && a.ai === b.ai && a.total === b.total;
}
