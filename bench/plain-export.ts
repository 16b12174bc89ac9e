import fs from 'node:fs/promises';
import { Agent, request } from 'undici';
import { ENCODERS } from '../src/exports/formats';

interface PlainPage {
  visitors: { path: string; human: number; ai: number; total: number }[];
  hasMore: boolean;
}

export interface PlainExportOptions {
  service: { url: string; apiKey: string };
  projectId: string;
  dateFrom: string;
  dateTo: string;
  pageSize: number;
  /** Pages in flight; 1 is the sequential script. */
  concurrency: number;
  /** The CSV file written, in the export's own format (same header, same rows, offset order). */
  file: string;
}

/**
 * The baseline a user would write without Temporal: undici GETs of offset pages, `concurrency` in flight,
 * stopping at the first page without `hasMore`, then one CSV file. No retries, no staging, no durability.
 */
export async function plainExport(options: PlainExportOptions): Promise<{ rows: number; pages: number }> {
  const agent = new Agent({ connections: options.concurrency });
  const csv = ENCODERS.csv;
  const pages = new Map<number, string>();
  let next = 0;
  let lastPage = Number.POSITIVE_INFINITY;
  const fetchPage = async (index: number): Promise<PlainPage> => {
    const query = new URLSearchParams({
      dateFrom: options.dateFrom,
      dateTo: options.dateTo,
      limit: String(options.pageSize),
      offset: String(index * options.pageSize),
    });
    const url = `${options.service.url}/v1/analytics/${encodeURIComponent(options.projectId)}/visitors?${query.toString()}`;
    const response = await request(url, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${options.service.apiKey}`, accept: 'application/json' },
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`page ${index}: HTTP ${response.statusCode}`);
    }
    return (await response.body.json()) as PlainPage;
  };
  const lane = async (): Promise<void> => {
    while (next <= lastPage) {
      const index = next;
      next += 1;
      const page = await fetchPage(index);
      if (!page.hasMore) lastPage = Math.min(lastPage, index);
      if (index <= lastPage) pages.set(index, page.visitors.map((row, i) => csv.row(row, i)).join(''));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, lane));
  } finally {
    await agent.close();
  }
  const ordered = [...pages.entries()].filter(([index]) => index <= lastPage).sort(([a], [b]) => a - b);
  const body = ordered.map(([, rows]) => rows).join('');
  await fs.writeFile(options.file, csv.start + body + csv.end);
  return { rows: countCsvRows(csv.start + body), pages: ordered.length };
}

/** Data rows of a CSV export file (lines after the header; paths never hold a newline in this data set). */
export function countCsvRows(text: string): number {
  const lines = text.split('\n').filter((line) => line !== '');
  return Math.max(0, lines.length - 1);
}
