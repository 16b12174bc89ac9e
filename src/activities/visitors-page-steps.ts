import { CancelledFailure } from '@temporalio/common';
import type { VisitorsPage } from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import type { ChunkWriter, ExportStaging } from '../exports/staging';
import { exportFailures } from './export-failures';
import { toApplicationFailure } from './failures';
import type { PageRequest, PageSummary } from './visitors-export';

/** The steps of an offset page (request, stage), shared by the page activity and the page-block activity. */
export interface VisitorsPageSteps {
  /** The service's answer; its failure as Temporal sees it, or CancelledFailure once `signal` aborted. */
  request(request: PageRequest, signal: AbortSignal): Promise<VisitorsPage>;
  /** Stages the answer's rows (a retry rewrites the same object) and returns its counts. */
  stage(request: PageRequest, page: VisitorsPage, signal: AbortSignal): Promise<PageSummary>;
  /**
   * Stages consecutive answers of a block as one chunk (ExportStaging.writeChunk), in offset order, and returns
   * their counts; the chunk is written whole or not at all.
   */
  stageChunk(
    chunk: ChunkRequest,
    pages: readonly StagedAnswer[],
    signal: AbortSignal,
  ): Promise<PageSummary[]>;
}

/** The block staging a chunk: its export, and the writer's ordering key (see resolveStagedPages). */
export interface ChunkRequest extends ChunkWriter {
  exportKey: string;
}

/** A page's answer and its offset. */
export interface StagedAnswer {
  offset: number;
  page: VisitorsPage;
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
      await staged(signal, () =>
        stagingOf(request.exportKey).writePage(request.offset, page.visitors, signal),
      );
      return summaryOf({ offset: request.offset, page });
    },

    async stageChunk(chunk, pages, signal) {
      const { exportKey, ...writer } = chunk;
      const rows = pages.map(({ offset, page }) => ({ offset, rows: page.visitors }));
      await staged(signal, () => stagingOf(exportKey).writeChunk(writer, rows, signal));
      return pages.map(summaryOf);
    },
  };
}

/** A staging write, its expected failures typed (exportFailures); CancelledFailure once `signal` aborted. */
async function staged(signal: AbortSignal, write: () => Promise<void>): Promise<void> {
  try {
    await exportFailures(write);
  } catch (error) {
    if (signal.aborted) throw new CancelledFailure('page cancelled while its rows were being staged');
    throw error;
  }
}

function summaryOf({ offset, page }: StagedAnswer): PageSummary {
  return { offset, rows: page.visitors.length, hasMore: page.hasMore, totals: page.totals };
}
