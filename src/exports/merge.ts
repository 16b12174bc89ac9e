import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { InvariantError } from '../contract/errors';
import type { ExportFormat } from '../contract/visitors-export';
import type { ExportDestination } from './destination';
import { encoderFor } from './formats';
import { SeenPaths } from './seen-paths';
import { rowsOf, type ExportStaging } from './staging';

export interface MergeOptions {
  staging: ExportStaging;
  /** The offsets of the export's pages, in order. */
  offsets: readonly number[];
  format: ExportFormat;
  /** Where the export file goes: the staging area's destination unless given. */
  destination?: ExportDestination;
  /** The export file's key (relative to the destination); replaced whole once complete. */
  target: string;
  /** Called before each page (the activity heartbeats here). */
  onPage?: (index: number) => void;
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
/**
 * Pages opened ahead of the one being written: over object storage each page is a request, and a few in flight
 * hide their latency. Each holds at most one staged page (at most 250 rows), so memory stays bounded.
 */
const PAGES_AHEAD = 16;

/**
 * Streams the staged pages in offset order into the export file. A path seen again (on a later page, or twice on
 * one page) is counted and skipped: its first occurrence is kept.
 */
export async function mergeStagedPages(options: MergeOptions): Promise<MergeOutcome> {
  const encoder = encoderFor(options.format);
  const destination = options.destination ?? options.staging.destination;
  const file = await destination.openFinal(options.target);
  const hash = createHash('sha256');
  const write = async (chunk: string): Promise<void> => {
    if (chunk === '') return;
    hash.update(chunk);
    await file.write(chunk);
  };
  const seen = new SeenPaths();
  const isDuplicate = duplicateCheck(options.staging, options.offsets);
  const duplicatePaths: string[] = [];
  let duplicateCount = 0;
  let stagedRows = 0;
  let rows = 0;
  const opened: Promise<Readable>[] = [];
  const openAhead = (next: number): void => {
    while (opened.length < PAGES_AHEAD && next + opened.length < options.offsets.length) {
      const offset = options.offsets[next + opened.length] ?? 0;
      const page = options.staging.openPage(offset);
      page.catch(() => undefined); // reported when its turn comes
      opened.push(page);
    }
  };
  let bytes: number;
  try {
    await write(encoder.start());
    for (let index = 0; index < options.offsets.length; index += 1) {
      options.onPage?.(index);
      openAhead(index);
      const page = opened.shift();
      if (!page) throw new InvariantError(`page ${index} was not opened`);
      let chunk = '';
      const onThisPage = new Set<string>();
      for (const row of await rowsOf(await page)) {
        stagedRows += 1;
        const candidates = seen.candidates(row.path);
        if (candidates.length > 0 && (await isDuplicate(candidates, index, onThisPage, row.path))) {
          duplicateCount += 1;
          if (duplicatePaths.length < MAX_REPORTED_DUPLICATES) duplicatePaths.push(row.path);
          continue;
        }
        seen.add(row.path, index);
        onThisPage.add(row.path);
        chunk += encoder.row(row, rows);
        rows += 1;
      }
      await write(chunk);
    }
    await write(encoder.end());
    bytes = await file.commit();
  } catch (error) {
    await file.abort();
    for (const page of opened) void page.then((stream) => stream.destroy()).catch(() => undefined);
    throw error;
  }
  return { rows, stagedRows, bytes, sha256: hash.digest('hex'), duplicateCount, duplicatePaths };
}

/** Pages read again to confirm a duplicate: kept while the merge may ask again (one page often repeats another). */
const CONFIRMED_PAGES = 8;

/**
 * Whether a path was written before: its fingerprint names candidate pages, and a candidate that holds the path
 * (read again from staging; the page being merged from what it wrote so far) makes it a duplicate.
 */
function duplicateCheck(staging: ExportStaging, offsets: readonly number[]) {
  const pages = new Map<number, Set<string>>();
  const pathsOf = async (index: number): Promise<Set<string>> => {
    const cached = pages.get(index);
    if (cached) return cached;
    const paths = new Set<string>();
    for (const row of await rowsOf(await staging.openPage(offsets[index] ?? 0))) paths.add(row.path);
    if (pages.size >= CONFIRMED_PAGES) pages.delete(pages.keys().next().value ?? 0);
    pages.set(index, paths);
    return paths;
  };
  return async (
    candidates: readonly number[],
    current: number,
    onThisPage: ReadonlySet<string>,
    path: string,
  ): Promise<boolean> => {
    for (const page of candidates) {
      if (page === current ? onThisPage.has(path) : (await pathsOf(page)).has(path)) return true;
    }
    return false;
  };
}
