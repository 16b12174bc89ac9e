import { setMaxListeners } from 'node:events';
import type { ExportCompression, ExportFormat, VisitorRow } from '../contract/visitors-export';
import { hashedOutput, StagingMissingError, type ExportDestination } from './destination';
import { openExportFile, type ExportFileOptions } from './formats';
import { ObjectReadAhead } from './merge-reads';
import { SeenPaths } from './seen-paths';
import type { StagedSource } from './staged-objects';
import type { ExportStaging } from './staging';

export interface MergeOptions {
  staging: ExportStaging;
  /** The offsets of the export's pages, in order. */
  offsets: readonly number[];
  format: ExportFormat;
  /** gzip for CSV and NDJSON (none by default). */
  compression?: ExportCompression;
  /** The export's dates: a Parquet file holds them as columns. */
  range?: ExportFileOptions['range'];
  /** Where the export file goes: the staging area's destination unless given. */
  destination?: ExportDestination;
  /** The export file's key (relative to the destination); replaced whole once complete. */
  target: string;
  /** Called before each page (the activity heartbeats here). */
  onPage?: (index: number) => void;
  /** Called once the file is written, before it replaces the target. */
  beforeCommit?: () => Promise<void>;
}

export interface MergeOutcome {
  /** Rows written: each path once. */
  rows: number;
  /** Rows read from the staged pages, duplicates included. */
  stagedRows: number;
  bytes: number;
  sha256: string;
  duplicateCount: number;
  /** The first few duplicated paths, for the warning. */
  duplicatePaths: string[];
}

const MAX_REPORTED_DUPLICATES = 20;
/** Pages read ahead of the one being written, about (whole chunks, at least two). */
const PAGES_AHEAD = 16;
/**
 * Streams the staged pages in offset order into the export file. A path seen again (on a later page, or twice on
 * one page) is counted and skipped: its first occurrence is kept.
 */
export async function mergeStagedPages(options: MergeOptions): Promise<MergeOutcome> {
  const sources = await sourcesOf(options.staging, options.offsets);
  const destination = options.destination ?? options.staging.destination;
  const file = await destination.openFinal(options.target);
  const output = hashedOutput(file);
  const seen = new SeenPaths();
  const duplicatePaths: string[] = [];
  let duplicateCount = 0;
  let stagedRows = 0;
  let rows = 0;
  const stop = new AbortController();
  // One listener per object read ahead, removed when it is read.
  setMaxListeners(ObjectReadAhead.maxReads(PAGES_AHEAD) + 1, stop.signal);
  const readAhead = new ObjectReadAhead(options.staging, sources, stop.signal, PAGES_AHEAD);
  let bytes: number;
  try {
    const writer = await openExportFile(output, options);
    for (let index = 0; index < sources.length; index += 1) {
      options.onPage?.(index);
      const pageRows = await readAhead.page(index);
      stagedRows += pageRows.length;
      for (let at = 0; at < pageRows.length; at += 1) {
        const row = pageRows[at] as VisitorRow;
        if (!seen.add(row.path)) {
          duplicateCount += 1;
          if (duplicatePaths.length < MAX_REPORTED_DUPLICATES) duplicatePaths.push(row.path);
          continue;
        }
        writer.add(row);
        rows += 1;
      }
      await writer.drain();
    }
    await writer.end();
    await options.beforeCommit?.();
    bytes = await file.commit();
  } catch (error) {
    stop.abort();
    await file.abort();
    throw error;
  }
  return { rows, stagedRows, bytes, sha256: output.sha256(), duplicateCount, duplicatePaths };
}

/** The sources of the export's pages; StagingMissingError naming the offsets no staged object holds. */
async function sourcesOf(staging: ExportStaging, offsets: readonly number[]): Promise<StagedSource[]> {
  const staged = await staging.stagedPages(offsets);
  if (staged.found) return staged.sources;
  const { missing } = staged;
  throw new StagingMissingError(
    `${missing.length} staged page(s) not found under ${staging.directory} (offsets ${missing.slice(0, 5).join(', ')}): ` +
      'every worker host that runs this task queue must see the same EXPORT_DIR (one shared volume, or one bucket)',
  );
}
