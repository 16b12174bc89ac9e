import { createHash, randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { InvariantError } from '../contract/errors';
import { VisitorsExportFailureType, type VisitorRow } from '../contract/visitors-export';
import {
  isStagingKey,
  parseStagedChunkName,
  STAGING_FOLDER,
  stagedChunkName,
  stagingFolderKey,
  type StagedChunkName,
} from './layout';

/** An object written in pieces, visible at its key only whole, by `commit` (rename, or multipart completion). */
export interface FinalObjectWriter {
  write(chunk: string | Uint8Array): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** An object under the destination: its key and, when listed with times, when it was last written (epoch ms). */
export interface StoredObject {
  key: string;
  modifiedMs?: number;
}

/** Staged objects removed in parallel when an export's staging goes (under the S3 client's 50 sockets). */
const REMOVALS_AT_ONCE = 32;

/** Written by ExportStaging.prepare: a page is staged only beside it. */
const PREPARED_MARKER = '.prepared';

/**
 * Where exports go: a local directory or an S3 bucket (and prefix), with relative '/'-separated keys. The two
 * backends write, read, remove and list objects; the probe, staging and listing are one flow over those.
 */
export abstract class ExportDestination {
  /** An absolute directory or `s3://bucket[/prefix]`; `location` gives a key's path or URI. */
  abstract readonly root: string;
  abstract location(key: string): string;
  /** Writes a small object whole: readers see the old one or the new one, never a part. */
  abstract writeFinal(key: string, content: string, signal?: AbortSignal): Promise<void>;
  abstract openFinal(key: string): Promise<FinalObjectWriter>;
  /** A small object's text, or undefined when there is none. */
  abstract readFinal(key: string): Promise<string | undefined>;
  /** Removes an object (none there is fine). */
  abstract removeFinal(key: string): Promise<void>;
  /**
   * The objects whose keys start with `prefix`, staged ones included, never one being written. `withTimes`: with
   * `modifiedMs` (a stat per file on a local directory, which a merge's listing of its pages must not pay).
   */
  protected abstract listObjects(prefix: string, withTimes?: boolean): Promise<StoredObject[]>;

  /**
   * Writes and removes a small object before an export fetches anything, so that a full or read-only disk, a
   * missing bucket or permission fail it at once (destinationUnavailable, never naming a credential).
   */
  async probe(): Promise<void> {
    const key = `.probe-${randomBytes(6).toString('hex')}`;
    await this.writeFinal(key, 'probe\n');
    await this.removeFinal(key);
  }

  /** Keys of the objects under `prefix`, sorted: staged objects only when the prefix is in staging. */
  async listFinal(prefix: string): Promise<string[]> {
    const keys = (await this.listObjects(prefix)).map((object) => object.key);
    return keys.filter((key) => !isStagingKey(key) || isStagingKey(prefix)).sort();
  }

  /**
   * Removes the staging folders where nothing was written for `olderThanMs` (every run rewrites its marker, every
   * chunk is an object); returns their names. A folder without a marker but written lately (a worker of an older
   * version staging there) is kept.
   */
  async pruneStaleStaging(olderThanMs: number, now = Date.now()): Promise<string[]> {
    const root = `${STAGING_FOLDER}/`;
    const touched = new Map<string, number>();
    for (const { key, modifiedMs = 0 } of await this.listObjects(root, true)) {
      const [name = ''] = key.slice(root.length).split('/', 1);
      touched.set(name, Math.max(touched.get(name) ?? 0, modifiedMs));
    }
    const stale = [...touched].filter(([, at]) => now - at > olderThanMs).map(([name]) => name);
    for (const name of stale) await new ExportStaging(this, name).remove();
    return stale;
  }
}

/** The destination cannot take the export and another attempt cannot fix it; never names a credential. */
export function destinationUnavailable(message: string): ApplicationFailure {
  const type = VisitorsExportFailureType.destinationUnavailable;
  return ApplicationFailure.create({ type, nonRetryable: true, message });
}

/** The staging folder is gone (cleaned up) or not where this worker looks: another attempt cannot find it either. */
export function stagingMissing(message: string): ApplicationFailure {
  const type = VisitorsExportFailureType.stagingMissing;
  return ApplicationFailure.create({ type, nonRetryable: true, message });
}

/** A failure of the destination that another attempt cannot fix (destinationUnavailable, stagingMissing). */
export function isPermanent(error: unknown): error is ApplicationFailure {
  return error instanceof ApplicationFailure && error.nonRetryable === true;
}

/** The export file's bytes on their way to the destination, counted and hashed as they pass (the manifest's). */
export type HashedOutput = ReturnType<typeof hashedOutput>;

export function hashedOutput(file: FinalObjectWriter) {
  const hash = createHash('sha256');
  let bytes = 0;
  return {
    async write(chunk: Uint8Array): Promise<void> {
      hash.update(chunk);
      bytes += chunk.byteLength;
      await file.write(chunk);
    },
    bytes: (): number => bytes,
    sha256: (): string => hash.digest('hex'),
  };
}

/** Encodes rows as the merge streams them: `add` each row, `drain` between pages, `end` once (then commit). */
export interface ExportFileWriter {
  add(row: VisitorRow): void;
  drain(): Promise<void>;
  end(): Promise<void>;
}

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

/** The page run that writes a chunk: its first offset and the workflow's attempt there. */
export type ChunkWriter = Pick<StagedChunkName, 'runOffset' | 'attempt'>;

/** One export's staging area under `.staging/<export>/`: chunks of consecutive pages, each written whole. */
export class ExportStaging {
  readonly destination: ExportDestination;
  readonly #folder: string;

  constructor(destination: ExportDestination, exportKey: string) {
    this.destination = destination;
    this.#folder = stagingFolderKey(exportKey);
  }

  /** Makes the area ready (idempotent; every run of the export writes its marker again). */
  async prepare(): Promise<void> {
    await this.destination.writeFinal(`${this.#folder}/${PREPARED_MARKER}`, '');
  }

  /**
   * Consecutive pages as one chunk. A chunk finishing after its export was cleaned up, or on a host that does not
   * see the prepared area, fails with stagingMissing and leaves nothing: the marker's check and the write go
   * together (one round trip), and a chunk written beside no marker is removed.
   */
  async writeChunk(
    writer: ChunkWriter,
    pages: readonly StagedPageRows[],
    signal?: AbortSignal,
  ): Promise<void> {
    const first = pages[0];
    if (first === undefined) throw new InvariantError('a staged chunk holds at least one page');
    const key = `${this.#folder}/${stagedChunkName({ ...writer, firstOffset: first.offset, pages: pages.length })}`;
    const [marker] = await Promise.all([
      this.destination.readFinal(`${this.#folder}/${PREPARED_MARKER}`),
      this.destination.writeFinal(key, chunkText(pages), signal),
    ]);
    if (marker !== undefined) return;
    await this.destination.removeFinal(key);
    throw stagingMissing(
      `staging folder ${this.directory} is not prepared: the export was cleaned up, or this worker's EXPORT_DIR ` +
        'is not the destination that prepared it (one shared volume, or one bucket)',
    );
  }

  async readObject(name: string): Promise<StagedPageRows[]> {
    return parseChunk(name, await this.readObjectText(name));
  }

  async readObjectText(name: string): Promise<string> {
    const text = await this.destination.readFinal(`${this.#folder}/${name}`);
    if (text === undefined) throw stagingMissing(`staged page ${this.directory}/${name} not found`);
    return text;
  }

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
    // The marker first: a chunk still in flight then fails rather than staging into an area being removed.
    await this.destination.removeFinal(`${this.#folder}/${PREPARED_MARKER}`);
    const keys = await this.destination.listFinal(`${this.#folder}/`);
    await inGroupsOf(keys, REMOVALS_AT_ONCE, (key) => this.destination.removeFinal(key));
  }
}

/**
 * `each` over `items`, `size` at a time, results in order: thousands of requests at once would wait for a socket
 * longer than the S3 client's connect timeout.
 */
export async function inGroupsOf<T, R>(
  items: readonly T[],
  size: number,
  each: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return results;
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

/** The rows of staged NDJSON (JSON.stringify escapes every line break in a row), parsed as one JSON array. */
function rowsOf(text: string): VisitorRow[] {
  const lines = text.endsWith('\n') ? text.slice(0, -1) : text;
  return lines === '' ? [] : (JSON.parse(`[${lines.replaceAll('\n', ',')}]`) as VisitorRow[]);
}
