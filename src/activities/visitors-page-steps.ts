import { CancelledFailure } from '@temporalio/common';
import type { VisitorsPage } from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import type { ExportStaging } from '../exports/staging';
import { exportFailures } from './export-failures';
import { toApplicationFailure } from './failures';
import type { PageRequest, PageSummary } from './visitors-export';

/** The two steps of an offset page, shared by the page activity and the page-block activity. */
export interface VisitorsPageSteps {
  /** The service's answer; its failure as Temporal sees it, or CancelledFailure once `signal` aborted. */
  request(request: PageRequest, signal: AbortSignal): Promise<VisitorsPage>;
  /** Stages the answer's rows (a retry rewrites the same object) and returns its counts. */
  stage(request: PageRequest, page: VisitorsPage, signal: AbortSignal): Promise<PageSummary>;
}

export function visitorsPageSteps(
  docsApi: DocsApiClient,
  stagingOf: (exportKey: string) => ExportStaging,
): VisitorsPageSteps {
  return {
    async request(request, signal) {
      try {
        return await docsApi.getVisitors(
          request.projectId,
          {
            dateFrom: request.dateFrom,
            dateTo: request.dateTo,
            limit: request.limit,
            offset: request.offset,
          },
          { signal },
        );
      } catch (error) {
        // Reported as cancelled (not failed) when the page was cancelled: past the end, or shut down.
        if (signal.aborted) throw new CancelledFailure('page cancelled while its request was in flight');
        throw toApplicationFailure(error);
      }
    },

    async stage(request, page, signal) {
      try {
        await exportFailures(() =>
          stagingOf(request.exportKey).writePage(request.offset, page.visitors, signal),
        );
      } catch (error) {
        if (signal.aborted) throw new CancelledFailure('page cancelled while its rows were being staged');
        throw error;
      }
      return {
        offset: request.offset,
        rows: page.visitors.length,
        hasMore: page.hasMore,
        totals: page.totals,
      };
    },
  };
}
