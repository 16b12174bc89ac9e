import { InvariantError } from '../contract/errors';
import type { ExportCompression, ExportFormat, VisitorRow } from '../contract/visitors-export';
import { hashedOutput, StagingMissingError } from './destination';
import { openExportFile, type ExportFileOptions } from './formats';
import { parseStagedChunkName } from './layout';
import { SeenPaths } from './seen-paths';
import type { ExportStaging, StagedPageRows, StagedSource } from './staging';

export interface MergeOptions {
  staging: ExportStaging;
  /** The offsets of the export's pages, in order. */
  offsets: readonly number[];
  format: ExportFormat;
  /** gzip for CSV and NDJSON (none by default). */
  compression?: ExportCompression;
  /** The export's dates: a Parquet file holds them as columns. */
  range?: ExportFileOptions['range'];
  /** The export file's key (relative to the staging area's destination); replaced whole once complete. */
  target: string;
  /** Called before each page (the activity heartbeats here). */
  onPage?: (index: number) => void;
  /** Called once the file is written, before it replaces the target. */
  beforeCommit?: () => Promise<void>;
  /** The paths' fingerprints (tests force collisions). */
  fingerprint?: (path: string) => [number, number];
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
  const { staging } = options;
  const sources = await sourcesOf(staging, options.offsets);
  const file = await staging.destination.openFinal(options.target);
  const output = hashedOutput(file);
  const seen = new SeenPaths(options.fingerprint);
  const writtenBefore = duplicateCheck(staging, sources);
  const duplicatePaths: string[] = [];
  let duplicateCount = 0;
  let stagedRows = 0;
  let rows = 0;
  const readAhead = new ObjectReadAhead(staging, sources, PAGES_AHEAD);
  let bytes: number;
  try {
    const writer = await openExportFile(output, options);
    for (let index = 0; index < sources.length; index += 1) {
      options.onPage?.(index);
      const pageRows = await readAhead.page(index);
      stagedRows += pageRows.length;
      for (let at = 0; at < pageRows.length; at += 1) {
        const row = pageRows[at] as VisitorRow;
        // Almost every path has no earlier page with its fingerprint: only a match costs a check (and an await).
        const earlier = seen.add(row.path, index);
        if (earlier.length > 0 && (await writtenBefore(row.path, earlier, index, pageRows.slice(0, at)))) {
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

/**
 * Whether a path whose fingerprint matched was written before: on the current page's rows before it, or on an
 * earlier page with the fingerprint, read again from staging (the last object read kept: matches cluster).
 */
function duplicateCheck(staging: ExportStaging, sources: readonly StagedSource[]) {
  let last: { object: string; pages: Promise<StagedPageRows[]> } | undefined;
  return async (path: string, pages: number[], current: number, before: readonly VisitorRow[]) => {
    for (const page of pages) {
      const source = sources[page] as StagedSource;
      let rows = before;
      if (page !== current) {
        if (last?.object !== source.object)
          last = { object: source.object, pages: staging.readObject(source.object) };
        rows = rowsAt(source, await last.pages);
      }
      if (rows.some((row) => row.path === path)) return true;
    }
    return false;
  };
}

/** The rows of `source`'s page in its object's pages; InvariantError when the object holds another page there. */
function rowsAt(source: StagedSource, pages: readonly StagedPageRows[]): readonly VisitorRow[] {
  const page = pages[source.position];
  if (page?.offset !== source.offset) {
    throw new InvariantError(
      `staged object ${source.object} holds no page at offset ${source.offset} (position ${source.position})`,
    );
  }
  return page.rows;
}

/**
 * The merge's reads: each staged object read once, in page order, up to about `pagesAhead` pages ahead (at least
 * two objects), so object-storage requests hide each other's latency in bounded memory; an object is let go after
 * its last page. Kept in arrays, not a Map: a Map doubled the 1,000,000-row merge's RSS (bench/merge-memory.ts).
 */
class ObjectReadAhead {
  /** Staged objects in the order of their first page. */
  readonly #objects: string[] = [];
  /** Per page (index into sources): its object's index in #objects. */
  readonly #objectOf: number[];
  /** Per object: the index of its last page; the pages it holds. */
  readonly #lastUse: number[] = [];
  readonly #sizes: number[] = [];
  /** Per object: its read, from launched until its last page is handed out. */
  readonly #reads: (Promise<StagedPageRows[]> | undefined)[] = [];
  #held = 0;
  #heldPages = 0;
  #launched = 0;

  constructor(
    private readonly staging: ExportStaging,
    private readonly sources: readonly StagedSource[],
    private readonly pagesAhead: number,
  ) {
    const indexOf = new Map<string, number>();
    this.#objectOf = sources.map((source, index) => {
      let object = indexOf.get(source.object);
      if (object === undefined) {
        object = this.#objects.push(source.object) - 1;
        indexOf.set(source.object, object);
        this.#sizes[object] = parseStagedChunkName(source.object)?.pages ?? 1;
      }
      this.#lastUse[object] = index;
      return object;
    });
  }

  /** The rows of the page at `index` of the sources; asked for in increasing order. */
  async page(index: number): Promise<readonly VisitorRow[]> {
    const source = this.sources[index];
    const object = this.#objectOf[index];
    if (source === undefined || object === undefined) throw new InvariantError(`no staged page ${index}`);
    this.#fill();
    const read = this.#reads[object];
    if (read === undefined) throw new InvariantError(`staged object ${source.object} was not read`);
    const rows = rowsAt(source, await read);
    if (this.#lastUse[object] === index) {
      this.#reads[object] = undefined;
      this.#held -= 1;
      this.#heldPages -= this.#sizes[object] ?? 1;
      this.#fill();
    }
    return rows;
  }

  #fill(): void {
    for (let next = this.#objects[this.#launched]; next !== undefined; next = this.#objects[this.#launched]) {
      const pages = this.#sizes[this.#launched] ?? 1;
      if (this.#held >= 2 && this.#heldPages + pages > this.pagesAhead) return;
      const read = this.staging.readObject(next);
      read.catch(() => undefined); // reported when its turn comes
      this.#reads[this.#launched] = read;
      this.#held += 1;
      this.#heldPages += pages;
      this.#launched += 1;
    }
  }
}
