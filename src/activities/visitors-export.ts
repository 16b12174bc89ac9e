import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { Context } from '@temporalio/activity';
import { EXPORT_FORMATS, type ExportFormat, type VisitorTotals } from '../contract/visitors-export';
import type { DocsApiClient } from '../docs-api/client';
import type { VisitorRow } from '../docs-api/schemas';
import { temporaryPathFor, writeFileAtomic } from '../exports/atomic-file';
import { encoderFor } from '../exports/formats';
import { exportDirectory, exportFileName, stagedPagePath, stagingDirectory } from '../exports/layout';
import { toApplicationFailure } from './failures';
import { whileHeartbeating } from './heartbeat';

export interface VisitorsExportActivityDeps {
  docsApi: DocsApiClient;
  /** Root of exports and of the staging area; shared by all worker hosts in a multi-host deployment. */
  exportDir: string;
}

export interface PageRequest {
  exportKey: string;
  projectId: string;
  dateFrom: string;
  dateTo: string;
  offset: number;
  limit: number;
}

/** What a page activity returns: counts only, the rows stay in the staging file. */
export interface PageSummary {
  offset: number;
  rows: number;
  hasMore: boolean;
  totals: VisitorTotals;
}

export interface MergeRequest {
  exportKey: string;
  projectId: string;
  dateFrom: string;
  dateTo: string;
  pageSize: number;
  /** Offsets 0, pageSize, ... up to and including the last page. */
  pages: number;
  /** Sum of the rows the page activities reported. */
  expectedRows: number;
  totals: VisitorTotals;
  format: ExportFormat;
  workflowId: string;
  runId: string;
}

export interface MergeResult {
  files: string[];
  rows: number;
  sha256: string;
  duplicatePaths: string[];
  duplicateCount: number;
  warnings: string[];
}

const MAX_REPORTED_DUPLICATES = 20;

export function createVisitorsExportActivities({ docsApi, exportDir }: VisitorsExportActivityDeps) {
  return {
    /** Fetches one offset page and stages its rows on disk (idempotent: a retry rewrites the same file). */
    async fetchVisitorsPage(request: PageRequest): Promise<PageSummary> {
      let page;
      try {
        page = await whileHeartbeating(() =>
          docsApi.getVisitors(
            request.projectId,
            {
              dateFrom: request.dateFrom,
              dateTo: request.dateTo,
              limit: request.limit,
              offset: request.offset,
            },
            { signal: Context.current().cancellationSignal },
          ),
        );
      } catch (error) {
        throw toApplicationFailure(error);
      }
      const lines = page.visitors.map((row) => JSON.stringify(row)).join('\n');
      await writeFileAtomic(
        stagedPagePath(exportDir, request.exportKey, request.offset),
        lines.length > 0 ? `${lines}\n` : '',
      );
      return {
        offset: request.offset,
        rows: page.visitors.length,
        hasMore: page.hasMore,
        totals: page.totals,
      };
    },

    /**
     * Merges the staged pages in offset order into the export file, then totals.json and manifest.json,
     * each written atomically; removes the staging area when done.
     */
    async mergeVisitorsExport(request: MergeRequest): Promise<MergeResult> {
      const targetDir = exportDirectory(exportDir, request.projectId, request.dateFrom, request.dateTo);
      await fs.mkdir(targetDir, { recursive: true });
      const target = path.join(targetDir, exportFileName(request.format));
      const tmp = temporaryPathFor(target);
      const hash = createHash('sha256');
      const out = createWriteStream(tmp);
      const write = async (chunk: string): Promise<void> => {
        if (chunk === '') return;
        hash.update(chunk);
        if (!out.write(chunk)) await once(out, 'drain');
      };
      const encoder = encoderFor(request.format);
      const seen = new Set<string>();
      const duplicates: string[] = [];
      let duplicateCount = 0;
      let stagedRows = 0;
      let written = 0;
      try {
        await write(encoder.start());
        for (let page = 0; page < request.pages; page++) {
          Context.current().heartbeat({ page });
          const file = stagedPagePath(exportDir, request.exportKey, page * request.pageSize);
          const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
          for await (const line of lines) {
            if (line === '') continue;
            const row = JSON.parse(line) as VisitorRow;
            stagedRows += 1;
            if (seen.has(row.path)) {
              duplicateCount += 1;
              if (duplicates.length < MAX_REPORTED_DUPLICATES) duplicates.push(row.path);
              continue;
            }
            seen.add(row.path);
            await write(encoder.row(row, written));
            written += 1;
          }
        }
        await write(encoder.end());
        out.end();
        await once(out, 'finish');
        await fs.rename(tmp, target);
      } catch (error) {
        out.destroy();
        await fs.rm(tmp, { force: true });
        throw error;
      }

      const warnings: string[] = [];
      if (stagedRows !== request.expectedRows) {
        warnings.push(
          `row count mismatch: pages reported ${request.expectedRows} rows, staged files hold ${stagedRows}`,
        );
      }
      if (duplicateCount > 0) {
        warnings.push(
          `${duplicateCount} path(s) appeared on more than one page (first occurrence kept): ${duplicates.join(', ')}`,
        );
      }
      const sha256 = hash.digest('hex');
      await removeOtherFormats(targetDir, request.format);
      const totalsFile = path.join(targetDir, 'totals.json');
      await writeFileAtomic(totalsFile, `${JSON.stringify(request.totals, null, 2)}\n`);
      const manifestFile = path.join(targetDir, 'manifest.json');
      const manifest = {
        projectId: request.projectId,
        range: { dateFrom: request.dateFrom, dateTo: request.dateTo, dateToExclusive: true },
        file: path.basename(target),
        format: request.format,
        rows: written,
        pages: request.pages,
        sha256,
        totals: request.totals,
        warnings,
        generatedAt: new Date().toISOString(),
        workflowId: request.workflowId,
        runId: request.runId,
      };
      await writeFileAtomic(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      await fs.rm(stagingDirectory(exportDir, request.exportKey), { recursive: true, force: true });
      return {
        files: [target, totalsFile, manifestFile],
        rows: written,
        sha256,
        duplicatePaths: duplicates,
        duplicateCount,
        warnings,
      };
    },
  };
}

/** A re-run in another format replaces the export whole: the previous format's file goes. */
async function removeOtherFormats(dir: string, keep: ExportFormat): Promise<void> {
  for (const format of EXPORT_FORMATS) {
    if (format !== keep) await fs.rm(path.join(dir, exportFileName(format)), { force: true });
  }
}
