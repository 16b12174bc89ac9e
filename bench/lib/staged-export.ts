import type { MergeRequest } from '../../src/activities/visitors-export';
import type { ExportFormat } from '../../src/contract/visitors-export';
import { MAX_CHUNK_PAGES } from '../../src/activities/visitors-pages';
import type { ExportStaging } from '../../src/exports/destination';

/** The merge benchmarks' pages: the service's largest page. */
export const PAGE_SIZE = 250;
const STAGING_CONCURRENCY = 16;

/** How the rows are staged: one-page chunks (a run whose writes keep pace with its pages), or full chunks. */
export type StagedAs = 'pages' | 'chunks';

/**
 * Stages `paths` distinct rows as pages of PAGE_SIZE with the real ExportStaging, 16 writes at a time: each page
 * in a chunk of its own, or in chunks of MAX_CHUNK_PAGES consecutive pages (a run whose writes are slow).
 */
export async function stageRows(
  staging: ExportStaging,
  paths: number,
  as: StagedAs = 'pages',
): Promise<void> {
  await staging.prepare();
  const pages = Math.ceil(paths / PAGE_SIZE);
  const perWrite = as === 'chunks' ? MAX_CHUNK_PAGES : 1;
  const writes = Math.ceil(pages / perWrite);
  const pageOf = (page: number) => ({
    offset: page * PAGE_SIZE,
    rows: Array.from({ length: Math.min(PAGE_SIZE, paths - page * PAGE_SIZE) }, (_, i) => {
      const n = page * PAGE_SIZE + i;
      return { path: `/docs/section-${n % 97}/page-${n}`, human: n % 13, ai: n % 7, total: n % 17 };
    }),
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: STAGING_CONCURRENCY }, async () => {
      for (let write = next++; write < writes; write = next++) {
        const first = write * perWrite;
        const staged = Array.from({ length: Math.min(perWrite, pages - first) }, (_, i) => pageOf(first + i));
        await staging.writeChunk({ runOffset: 0, attempt: 1 }, staged);
      }
    }),
  );
}

/** The merge activity's request for the rows stageRows staged under `exportKey`, as CSV unless told. */
export function mergeRequestFor(
  exportKey: string,
  paths: number,
  format: ExportFormat = 'csv',
): MergeRequest {
  return {
    exportKey,
    projectId: 'bench-merge',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: PAGE_SIZE,
    pages: Math.ceil(paths / PAGE_SIZE),
    expectedRows: paths,
    totals: { human: 1, ai: 1, total: 1 },
    format,
    warnings: [],
    workflowId: 'bench',
    runId: 'bench',
  };
}
