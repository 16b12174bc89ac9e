import { InvariantError } from '../contract/errors';
import type { VisitorRow } from '../contract/visitors-export';
import { StagingMissingError, type ExportDestination } from './destination';
import { LocalDestination } from './local-destination';
import { parseStagedChunkName, stagedChunkName, stagingFolderKey, type StagedChunkName } from './layout';

export { StagingMissingError } from './destination';

/** One page's rows as staged in a chunk. */
export interface StagedPageRows {
  offset: number;
  rows: readonly VisitorRow[];
}

/** Where the merge reads the page at `offset`: the chunk's name and the page's position in it. */
export interface StagedSource {
  offset: number;
  object: string;
  position: number;
}

/** The source of every offset asked for, or the offsets no chunk holds. */
export type StagedPages = { found: true; sources: StagedSource[] } | { found: false; missing: number[] };

/** The page run that writes a chunk: its first offset and the workflow's attempt there (see resolveStagedPages). */
export type ChunkWriter = Pick<StagedChunkName, 'runOffset' | 'attempt'>;

/**
 * One export's staging area under `.staging/<export>/`: chunks of consecutive pages
 * (`chunk-<runOffset>-<attempt>-<firstOffset>-<pages>.ndjson`), each written whole.
 */
export class ExportStaging {
  readonly destination: ExportDestination;
  readonly #folder: string;

  constructor(destination: ExportDestination | string, exportKey: string) {
    this.destination = typeof destination === 'string' ? new LocalDestination(destination) : destination;
    this.#folder = stagingFolderKey(exportKey);
  }

  async prepare(): Promise<void> {
    await this.destination.prepareStaging(this.#folder);
  }

  /** Consecutive pages as one chunk; StagingMissingError when the area is not prepared. */
  async writeChunk(
    writer: ChunkWriter,
    pages: readonly StagedPageRows[],
    signal?: AbortSignal,
  ): Promise<void> {
    const first = pages[0];
    if (first === undefined) throw new InvariantError('a staged chunk holds at least one page');
    const name = stagedChunkName({ ...writer, firstOffset: first.offset, pages: pages.length });
    await this.destination.stage(this.#folder, name, chunkText(pages), signal);
  }

  /** The pages of one chunk, read whole. */
  async readObject(name: string): Promise<StagedPageRows[]> {
    const text = await this.destination.readFinal(`${this.#folder}/${name}`);
    if (text === undefined) throw new StagingMissingError(`staged page ${this.directory}/${name} not found`);
    return parseChunk(name, text);
  }

  /** Which chunk holds each of `offsets`, or those none holds. */
  async stagedPages(offsets: readonly number[]): Promise<StagedPages> {
    const keys = await this.destination.listFinal(`${this.#folder}/`);
    return resolveStagedPages(
      keys.map((key) => key.slice(this.#folder.length + 1)),
      offsets,
    );
  }

  get directory(): string {
    return this.destination.location(this.#folder);
  }

  async remove(): Promise<void> {
    await this.destination.removeStaging(this.#folder);
  }
}

/**
 * Which chunk holds each of `offsets`, from one listing. Several chunks hold one page only when a run stopped
 * early and the workflow started a new one at the first page it had not counted (a greater offset, or the same
 * with the next attempt; re-reads of the end check carry attempts above any run's): the chunk with the greatest
 * (runOffset, attempt) holds the page the workflow counted.
 */
export function resolveStagedPages(names: Iterable<string>, offsets: readonly number[]): StagedPages {
  const indexOf = new Map(offsets.map((offset, index) => [offset, index]));
  const best: ({ chunk: StagedChunkName; name: string; start: number } | undefined)[] = [];
  for (const name of names) {
    const chunk = parseStagedChunkName(name);
    const start = chunk === undefined ? undefined : indexOf.get(chunk.firstOffset);
    if (chunk === undefined || start === undefined) continue;
    for (let index = start; index < Math.min(offsets.length, start + chunk.pages); index += 1) {
      const held = best[index];
      if (held === undefined || newer(chunk, held.chunk)) best[index] = { chunk, name, start };
    }
  }
  const sources: StagedSource[] = [];
  const missing: number[] = [];
  offsets.forEach((offset, index) => {
    const chunk = best[index];
    if (chunk === undefined) missing.push(offset);
    else sources.push({ offset, object: chunk.name, position: index - chunk.start });
  });
  return missing.length > 0 ? { found: false, missing } : { found: true, sources };
}

/** (runOffset, attempt) order; the first offset only makes the choice independent of the listing's order. */
function newer(a: StagedChunkName, b: StagedChunkName): boolean {
  if (a.runOffset !== b.runOffset) return a.runOffset > b.runOffset;
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  return a.firstOffset > b.firstOffset;
}

/** A chunk's text: a JSON header line `{"pages":[[offset,rows],…]}`, then every page's rows as NDJSON, in order. */
export function chunkText(pages: readonly StagedPageRows[]): string {
  const header = JSON.stringify({ pages: pages.map((page) => [page.offset, page.rows.length]) });
  const rows = pages.flatMap((page) => page.rows.map((row) => `${JSON.stringify(row)}\n`));
  return `${header}\n${rows.join('')}`;
}

/** The pages of a chunk's text (see chunkText); InvariantError when its header and rows disagree. */
export function parseChunk(name: string, text: string): StagedPageRows[] {
  const newline = text.indexOf('\n');
  const header: unknown = JSON.parse(newline < 0 ? text : text.slice(0, newline));
  const counts = (header as { pages?: unknown } | null)?.pages;
  if (!Array.isArray(counts) || !counts.every(isOffsetAndRows)) {
    throw new InvariantError(`staged chunk ${name}: its first line is not a header of pages`);
  }
  const rows = rowsOf(newline < 0 ? '' : text.slice(newline + 1));
  const expected = counts.reduce((sum, [, count]) => sum + count, 0);
  if (rows.length !== expected) {
    throw new InvariantError(`staged chunk ${name}: ${rows.length} rows, its header lists ${expected}`);
  }
  let at = 0;
  return counts.map(([offset, count]) => ({ offset, rows: rows.slice(at, (at += count)) }));
}

function isOffsetAndRows(value: unknown): value is [number, number] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    value.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
  );
}

/** The rows of staged NDJSON: one JSON object a line (the line breaks of node:readline), blanks skipped. */
function rowsOf(text: string): VisitorRow[] {
  const rows: VisitorRow[] = [];
  // JSON.stringify escapes every CR, so a page holds none unless something else wrote it: split on LF alone.
  for (const line of text.includes('\r') ? text.split(LINE_BREAK) : text.split('\n')) {
    if (line !== '') rows.push(JSON.parse(line) as VisitorRow);
  }
  return rows;
}

const LINE_BREAK = /\r\n|\n|\r/;
