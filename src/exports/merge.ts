import { createHash } from 'node:crypto';
import type { ExportFormat } from '../contract/visitors-export';
import { openAtomicFile } from './atomic-file';
import { encoderFor } from './formats';
import type { ExportStaging } from './staging';

export interface MergeOptions {
  staging: ExportStaging;
  /** The offsets of the export's pages, in order. */
  offsets: readonly number[];
  format: ExportFormat;
  /** The export file; replaced atomically once complete. */
  target: string;
  /** Called before each page (the activity heartbeats here). */
  onPage?: (index: number) => void;
}

export interface MergeOutcome {
  /** Rows written: each path once. */
  rows: number;
  /** Rows read from the staged pages, duplicates included. */
  stagedRows: number;
  sha256: string;
  duplicateCount: number;
  /** The first few duplicated paths, for the warning. */
  duplicatePaths: string[];
}

const MAX_REPORTED_DUPLICATES = 20;

/**
 * Streams the staged pages in offset order into the export file. A path seen again (on a later page, or twice on
 * one page) is counted and skipped: its first occurrence is kept.
 */
export async function mergeStagedPages(options: MergeOptions): Promise<MergeOutcome> {
  const encoder = encoderFor(options.format);
  const file = await openAtomicFile(options.target);
  const hash = createHash('sha256');
  const write = async (chunk: string): Promise<void> => {
    if (chunk === '') return;
    hash.update(chunk);
    await file.write(chunk);
  };
  const seen = new Set<string>();
  const duplicatePaths: string[] = [];
  let duplicateCount = 0;
  let stagedRows = 0;
  let rows = 0;
  try {
    await write(encoder.start());
    for (const [index, offset] of options.offsets.entries()) {
      options.onPage?.(index);
      let chunk = '';
      for await (const row of options.staging.readPage(offset)) {
        stagedRows += 1;
        if (seen.has(row.path)) {
          duplicateCount += 1;
          if (duplicatePaths.length < MAX_REPORTED_DUPLICATES) duplicatePaths.push(row.path);
          continue;
        }
        seen.add(row.path);
        chunk += encoder.row(row, rows);
        rows += 1;
      }
      await write(chunk);
    }
    await write(encoder.end());
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
  return { rows, stagedRows, sha256: hash.digest('hex'), duplicateCount, duplicatePaths };
}
