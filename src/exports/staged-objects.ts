import { InvariantError } from '../contract/errors';
import type { VisitorRow } from '../contract/visitors-export';
import { parseStagedChunkName, stagedPageName, type StagedChunkName } from './layout';

/** One page's rows as staged: a page object holds one, a chunk several. */
export interface StagedPageRows {
  offset: number;
  rows: readonly VisitorRow[];
}

/** Where the merge reads the page at `offset`: the staged object's name and the page's position in it. */
export interface StagedSource {
  offset: number;
  object: string;
  position: number;
}

/** The source of every offset asked for, or the offsets no staged object holds. */
export type StagedPages = { found: true; sources: StagedSource[] } | { found: false; missing: number[] };

/**
 * Which staged object holds each of `offsets` (the export's consecutive pages, in order), from the names of one
 * listing of the staging folder. Several may, after a block's worker died or a chunk's write failed late:
 * - the page object `page-<offset>` wins: a page activity writes it, and one runs for an offset only after any
 *   block that covered it (it re-fetches a page a block failed or lost), so it is the page the workflow counted;
 * - otherwise the chunk with the greatest (blockOffset, attempt). Blocks start at strictly increasing offsets,
 *   each after the last page counted, so a later block never covers a page an earlier one had counted; a block
 *   that died leaves chunks the workflow did not count only past its last heartbeat, where a later block (a
 *   greater blockOffset) or a page fetched alone took over; and a retried attempt of a block supersedes the
 *   attempts before it. So the greatest key is the block whose result or heartbeat counted the page.
 */
export function resolveStagedPages(names: Iterable<string>, offsets: readonly number[]): StagedPages {
  const all = new Set(names);
  const indexOf = new Map(offsets.map((offset, index) => [offset, index]));
  const best: ({ chunk: StagedChunkName; name: string; start: number } | undefined)[] = [];
  for (const name of all) {
    const chunk = parseStagedChunkName(name);
    const start = chunk === undefined ? undefined : indexOf.get(chunk.firstOffset);
    if (chunk === undefined || start === undefined) continue;
    for (let index = start; index < Math.min(offsets.length, start + chunk.pages); index += 1) {
      const held = best[index];
      if (held === undefined || later(chunk, name, held.chunk, held.name))
        best[index] = { chunk, name, start };
    }
  }
  const sources: StagedSource[] = [];
  const missing: number[] = [];
  offsets.forEach((offset, index) => {
    const page = stagedPageName(offset);
    const chunk = best[index];
    if (all.has(page)) sources.push({ offset, object: page, position: 0 });
    else if (chunk !== undefined) sources.push({ offset, object: chunk.name, position: index - chunk.start });
    else missing.push(offset);
  });
  return missing.length > 0 ? { found: false, missing } : { found: true, sources };
}

/** Orders chunks by (blockOffset, attempt); the name breaks a tie (none is expected) so the choice is stable. */
function later(a: StagedChunkName, aName: string, b: StagedChunkName, bName: string): boolean {
  if (a.blockOffset !== b.blockOffset) return a.blockOffset > b.blockOffset;
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  return aName > bName;
}

/** A chunk's text: a JSON header line `{"pages":[[offset,rows],…]}`, then every page's rows as NDJSON, in order. */
export function chunkText(pages: readonly StagedPageRows[]): string {
  const header = JSON.stringify({ pages: pages.map((page) => [page.offset, page.rows.length]) });
  return `${header}\n${pages.map((page) => ndjsonOf(page.rows)).join('')}`;
}

/** A page object's text: one JSON object a line. */
export function ndjsonOf(rows: readonly VisitorRow[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
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
export function rowsOf(text: string): VisitorRow[] {
  const rows: VisitorRow[] = [];
  // JSON.stringify escapes every CR, so a page holds none unless something else wrote it: split on LF alone.
  for (const line of text.includes('\r') ? text.split(LINE_BREAK) : text.split('\n')) {
    if (line !== '') rows.push(JSON.parse(line) as VisitorRow);
  }
  return rows;
}

const LINE_BREAK = /\r\n|\n|\r/;
