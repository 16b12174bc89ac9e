import type { MergeRequest } from '../../src/activities/visitors-export';
import type { ExportStaging } from '../../src/exports/staging';

/** The merge benchmarks' pages: the service's largest page. */
export const PAGE_SIZE = 250;
const STAGING_CONCURRENCY = 16;

/** Stages `paths` distinct rows as pages of PAGE_SIZE, 16 pages at a time, with the real ExportStaging. */
export async function stageRows(staging: ExportStaging, paths: number): Promise<void> {
  await staging.prepare();
  const pages = Math.ceil(paths / PAGE_SIZE);
  let next = 0;
  await Promise.all(
    Array.from({ length: STAGING_CONCURRENCY }, async () => {
      for (let page = next++; page < pages; page = next++) {
        const rows = Array.from({ length: Math.min(PAGE_SIZE, paths - page * PAGE_SIZE) }, (_, i) => {
          const n = page * PAGE_SIZE + i;
          return { path: `/docs/section-${n % 97}/page-${n}`, human: n % 13, ai: n % 7, total: n % 17 };
        });
        await staging.writePage(page * PAGE_SIZE, rows);
      }
    }),
  );
}

/** The merge activity's request for the rows stageRows staged under `exportKey`, as CSV. */
export function mergeRequestFor(exportKey: string, paths: number): MergeRequest {
  return {
    exportKey,
    projectId: 'bench-merge',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: PAGE_SIZE,
    pages: Math.ceil(paths / PAGE_SIZE),
    expectedRows: paths,
    totals: { human: 1, ai: 1, total: 1 },
    format: 'csv',
    warnings: [],
    workflowId: 'bench',
    runId: 'bench',
  };
}
