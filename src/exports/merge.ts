import { InvariantError } from '../contract/errors';
import type { VisitorRow } from '../contract/visitors-export';
import {
  hashedOutput,
  parseChunk,
  stagingMissing,
  type ExportStaging,
  type StagedPageRows,
  type StagedSource,
} from './destination';
import { openExportFile, type ExportFileOptions } from './formats';
import { parseStagedChunkName } from './layout';

export interface MergeOptions extends ExportFileOptions {
  staging: ExportStaging;
  offsets: readonly number[];
  /** The export file's key, replaced whole once complete; `beforeCommit` runs just before. */
  target: string;
  onPage?: (index: number) => void;
  beforeCommit?: () => Promise<void>;
  /** The paths' fingerprints (tests force collisions). */
  fingerprint?: (path: string) => [number, number];
  /** The rows the pages reported: the table of seen paths is made that large at once. */
  expectedRows?: number;
}

const MAX_REPORTED_DUPLICATES = 20;
/** Pages read ahead of the one being written, about (whole chunks, at least two). */
const PAGES_AHEAD = 16;
/**
 * Streams the staged pages in offset order into the export file. A path seen again (on a later page, or twice on
 * one page) is counted and skipped: its first occurrence is kept. `rows` are those written, `stagedRows` those read.
 */
export async function mergeStagedPages(options: MergeOptions) {
  const { staging } = options;
  const sources = await sourcesOf(staging, options.offsets);
  const file = await staging.destination.openFinal(options.target);
  const output = hashedOutput(file);
  const seen = new SeenPaths(options.fingerprint, options.expectedRows);
  const writtenBefore = duplicateCheck(staging, sources);
  const duplicatePaths: string[] = [];
  let duplicateCount = 0;
  let stagedRows = 0;
  let rows = 0;
  const readAhead = new ObjectReadAhead(staging, sources, PAGES_AHEAD);
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
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
  return { rows, stagedRows, bytes: output.bytes(), sha256: output.sha256(), duplicateCount, duplicatePaths };
}

/** The sources of the export's pages; stagingMissing naming the offsets no staged object holds. */
async function sourcesOf(staging: ExportStaging, offsets: readonly number[]): Promise<StagedSource[]> {
  const staged = await staging.stagedPages(offsets);
  if (staged.found) return staged.sources;
  const { missing } = staged;
  throw stagingMissing(
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
  /**
   * Per object: its text, from launched until its last page is handed out. It is parsed when its first page's
   * turn comes, so that its rows die young: rows parsed on arrival waited behind up to 16 pages, and their
   * promotion pushed a 1,000,000-row merge from object storage over 100 MB of RSS growth in 3 runs of 10.
   */
  readonly #reads: (Promise<string> | undefined)[] = [];
  #parsed: { object: number; pages: StagedPageRows[] } | undefined;
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
    if (this.#parsed?.object !== object)
      this.#parsed = { object, pages: parseChunk(source.object, await read) };
    const rows = rowsAt(source, this.#parsed.pages);
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
      const read = this.staging.readObjectText(next);
      read.catch(() => undefined); // reported when its turn comes
      this.#reads[this.#launched] = read;
      this.#held += 1;
      this.#heldPages += pages;
      this.#launched += 1;
    }
  }
}

/**
 * The paths a merge has written, as 64-bit fingerprints with the page of each (an open-addressing table of typed
 * arrays: 12 bytes a path, 24 MB for 1,000,000 paths where a Set of the strings took over 100). A fingerprint
 * seen before only names pages to read again: the merge compares the paths there, so the check stays exact.
 */
export class SeenPaths {
  #hi: Uint32Array;
  #lo: Uint32Array;
  /** Page index + 1; 0 marks an empty slot. */
  #page: Uint32Array;
  #size = 0;

  /** Sized for `expected` paths: growing the table at 1,000,000 paths held both sizes, 36 MB, at once. */
  constructor(
    private readonly hash: (path: string) => [number, number] = fingerprint,
    expected = 0,
  ) {
    let slots = 1 << 16;
    while ((expected + 1) * 2 > slots) slots *= 2;
    this.#hi = new Uint32Array(slots);
    this.#lo = new Uint32Array(slots);
    this.#page = new Uint32Array(slots);
  }

  /** Records `path`, read on page `page`; returns the pages of the paths recorded before with its fingerprint. */
  add(path: string, page: number): number[] {
    if ((this.#size + 1) * 2 > this.#page.length) this.#grow();
    const [hi, lo] = this.hash(path);
    const earlier: number[] = [];
    const mask = this.#page.length - 1;
    let slot = lo & mask;
    for (; this.#page[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) earlier.push((this.#page[slot] ?? 1) - 1);
    }
    this.#set(slot, hi, lo, page + 1);
    this.#size += 1;
    return earlier;
  }

  #set(slot: number, hi: number, lo: number, pagePlusOne: number): void {
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#page[slot] = pagePlusOne;
  }

  #grow(): void {
    const [hi, lo, page] = [this.#hi, this.#lo, this.#page];
    this.#hi = new Uint32Array(hi.length * 2);
    this.#lo = new Uint32Array(lo.length * 2);
    this.#page = new Uint32Array(page.length * 2);
    const mask = this.#page.length - 1;
    for (let from = 0; from < page.length; from += 1) {
      if (page[from] === 0) continue;
      let slot = (lo[from] ?? 0) & mask;
      while (this.#page[slot] !== 0) slot = (slot + 1) & mask;
      this.#set(slot, hi[from] ?? 0, lo[from] ?? 0, page[from] ?? 0);
    }
  }
}

/** Two 32-bit hashes of the UTF-16 code units (FNV-1a and a murmur-style mix), each finalized. */
function fingerprint(path: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9 ^ path.length;
  for (let i = 0; i < path.length; i += 1) {
    const unit = path.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return [mix32(a), mix32(b)];
}

/** murmur3's fmix32 finaliser: every input bit reaches every output bit, so low bits index a table well. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
