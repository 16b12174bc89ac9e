import type { PageSummary } from '../../activities/visitors-pages';
import type { VisitorsExportContinuation, VisitorTotals } from '../../contract/visitors-export';

const MAX_WARNINGS = 20;

/** Counts a page into the export's state, in offset order: rows, totals, and warnings about odd pages. */
export function countPage(state: VisitorsExportContinuation, page: PageSummary, pageSize: number): void {
  state.pagesDone += 1;
  state.rowsDone += page.rows;
  if (state.totals === null) state.totals = page.totals;
  else if (!sameTotals(state.totals, page.totals)) state.totalsMismatch = true;
  if (page.hasMore && page.rows === 0) {
    warn(state, `page at offset ${page.offset} was empty but said hasMore: the export stops there`);
  } else if (page.hasMore && page.rows < pageSize) {
    warn(
      state,
      `page at offset ${page.offset} had ${page.rows} of ${pageSize} rows but said hasMore: rows may be missing`,
    );
  }
}

export function totalsWarnings(state: VisitorsExportContinuation, totals: VisitorTotals): string[] {
  const warnings: string[] = [];
  if (state.totalsMismatch) {
    warnings.push("site-wide totals differed between pages: totals.json holds the first page's");
  }
  if (totals.total < Math.max(totals.human, totals.ai) || totals.total > totals.human + totals.ai) {
    warnings.push(`totals break max(human, ai) <= total <= human + ai: ${JSON.stringify(totals)}`);
  }
  return warnings;
}

function warn(state: VisitorsExportContinuation, warning: string): void {
  if (state.warnings.length < MAX_WARNINGS) state.warnings.push(warning);
}

function sameTotals(a: VisitorTotals, b: VisitorTotals): boolean {
  return a.human === b.human && a.ai === b.ai && a.total === b.total;
}
