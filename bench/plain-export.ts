import fs from 'node:fs/promises';
import { DocsApiClient } from '../src/docs-api/client';

/**
 * The baseline a user would write without Temporal: undici requests of offset pages, `concurrency` in flight,
 * stopping at the first page without `hasMore`, rows written to one ndjson file. No retries, no durability.
 */
export async function plainExport(options: {
  service: { url: string; apiKey: string };
  projectId: string;
  dateFrom: string;
  dateTo: string;
  pageSize: number;
  concurrency: number;
  file: string;
}): Promise<{ rows: number; pages: number }> {
  const api = new DocsApiClient({ baseUrl: options.service.url, apiKey: options.service.apiKey });
  const pages = new Map<number, string>();
  let next = 0;
  let lastPage = Number.POSITIVE_INFINITY;
  const fetchLoop = async () => {
    while (next <= lastPage) {
      const index = next;
      next += 1;
      const page = await api.getVisitors(options.projectId, {
        dateFrom: options.dateFrom,
        dateTo: options.dateTo,
        limit: options.pageSize,
        offset: index * options.pageSize,
      });
      if (!page.hasMore) lastPage = Math.min(lastPage, index);
      if (index <= lastPage)
        pages.set(index, page.visitors.map((row) => `${JSON.stringify(row)}\n`).join(''));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, fetchLoop));
  } finally {
    await api.close();
  }
  const ordered = [...pages.entries()].filter(([index]) => index <= lastPage).sort(([a], [b]) => a - b);
  const text = ordered.map(([, rows]) => rows).join('');
  await fs.writeFile(options.file, text);
  return { rows: text === '' ? 0 : text.split('\n').length - 1, pages: ordered.length };
}
