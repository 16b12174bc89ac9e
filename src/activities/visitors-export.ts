import { Context } from '@temporalio/activity';
import {
  type ExportCompression,
  type ExportFormat,
  type ExportLayout,
  type VisitorsExportContinuation,
  type VisitorsExportManifest,
  type VisitorTotals,
} from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import { clearExportFolder, finishExportFolder } from '../exports/manifest-days';
import { compressionFor, exportFileName, exportFolderKey, layoutFor } from '../exports/layout';
import { mergeStagedPages } from '../exports/merge';
import { openExportDestination, type S3DestinationOptions } from '../exports/s3-destination';
import { ExportStaging } from '../exports/destination';
import { whileHeartbeating } from './heartbeat';
import { createVisitorsPagesActivities } from './visitors-pages';

export interface VisitorsExportActivityDeps {
  docsApi: DocsApiClient;
  /** EXPORT_DIR: a local directory shared by every worker host, or `s3://bucket[/prefix]`. */
  exportDir: string;
  exportS3?: S3DestinationOptions;
  exportLayout?: ExportLayout | undefined;
  exportCompression?: ExportCompression | undefined;
}

/**
 * The export as counted (its staging area, dates, range sent and warnings: those found before the merge, in the
 * manifest too), and how to write it.
 */
export interface MergeRequest extends Pick<
  VisitorsExportContinuation,
  'exportKey' | 'dateFrom' | 'dateTo' | 'requestRange' | 'warnings'
> {
  projectId: string;
  pageSize: number;
  /** Pages at offsets 0, pageSize, … up to and including the last one. */
  pages: number;
  /** Sum of the rows the page activities reported. */
  expectedRows: number;
  totals: VisitorTotals;
  format: ExportFormat;
  /** The zone whose days dateFrom/dateTo are, when not UTC: named in the folder and the manifest. */
  timeZone?: string | undefined;
  /** The range had not ended when it was exported: named in the folder and the manifest. */
  partial?: boolean | undefined;
  workflowId: string;
  runId: string;
}

export type MergeResult = Awaited<
  ReturnType<ReturnType<typeof createVisitorsExportActivities>['mergeVisitorsExport']>
>;

/** Staging areas untouched this long belong to exports that were terminated: the next cleanup removes them. */
const STALE_STAGING_MS = 7 * 24 * 3_600_000;

export function createVisitorsExportActivities({
  docsApi,
  exportDir,
  exportS3,
  exportLayout,
  exportCompression,
}: VisitorsExportActivityDeps) {
  const destination = openExportDestination(exportDir, exportS3);
  const stagingOf = (exportKey: string): ExportStaging => new ExportStaging(destination, exportKey);
  return {
    ...createVisitorsPagesActivities(docsApi, stagingOf),

    /**
     * Merges the staged pages in offset order into the export file, then totals.json and manifest.json; leaves
     * the staging area, so a retry redoes the same merge.
     */
    async mergeVisitorsExport(request: MergeRequest) {
      return whileHeartbeating(() => merge(request));
    },

    /** Probes the destination, then creates the staging area: before the first page and its permit. */
    async prepareVisitorsExportStaging(exportKey: string): Promise<string> {
      return whileHeartbeating(async () => {
        await destination.probe();
        await stagingOf(exportKey).prepare();
        return destination.root;
      });
    },

    /** Removes an export's staging area (idempotent), and any staging area abandoned long ago. */
    async removeVisitorsExportStaging(exportKey: string): Promise<void> {
      await whileHeartbeating(async () => {
        await stagingOf(exportKey).remove();
        await destination.pruneStaleStaging(STALE_STAGING_MS);
      });
    },
  };

  async function merge(request: MergeRequest) {
    const staging = stagingOf(request.exportKey);
    const offsets = Array.from({ length: request.pages }, (_, page) => page * request.pageSize);
    const { projectId, dateFrom, dateTo, timeZone, format, requestRange, pages, totals } = request;
    const layout = layoutFor(format, exportLayout);
    const folder = exportFolderKey(projectId, dateFrom, dateTo, timeZone, layout, request.partial === true);
    const compression = compressionFor(format, exportCompression);
    const file = exportFileName(format, compression);
    const merged = await mergeStagedPages({
      staging,
      offsets,
      format,
      compression,
      range: { dateFrom, dateTo },
      target: `${folder}/${file}`,
      expectedRows: request.expectedRows,
      onPage: (page) => Context.current().heartbeat({ page }),
      beforeCommit: () => clearExportFolder(destination, folder, file),
    });

    const warnings: string[] = [];
    if (merged.stagedRows !== request.expectedRows) {
      warnings.push(
        `row count mismatch: pages reported ${request.expectedRows} rows, staged files hold ${merged.stagedRows}`,
      );
    }
    if (merged.duplicateCount > 0) {
      warnings.push(
        `${merged.duplicateCount} row(s) repeated a path already seen (first occurrence kept): ${merged.duplicatePaths.join(', ')}`,
      );
    }
    const { rows, bytes, sha256 } = merged;
    const manifest: VisitorsExportManifest = {
      projectId,
      range: {
        dateFrom,
        dateTo,
        dateToExclusive: true,
        ...(timeZone === undefined ? {} : { timeZone }),
        ...(requestRange === undefined ? {} : { requested: requestRange }),
      },
      ...(request.partial === true ? { partial: true } : {}),
      file,
      format,
      rows,
      pages,
      sha256,
      files: [{ name: file, rows, bytes, sha256 }],
      totals,
      warnings: [...request.warnings, ...warnings],
      generatedAt: new Date().toISOString(),
      workflowId: request.workflowId,
      runId: request.runId,
    };
    const files = await finishExportFolder(destination, folder, manifest);
    return { files, rows, bytes, sha256, duplicateCount: merged.duplicateCount, warnings };
  }
}
