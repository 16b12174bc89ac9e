import { addAbortSignal, type Readable } from 'node:stream';
import { InvariantError } from '../contract/errors';
import type { VisitorRow } from '../contract/visitors-export';
import type { ExportDestination } from './destination';
import { LocalDestination } from './local-destination';
import {
  parseStagedChunkName,
  parseStagedPageName,
  stagedChunkName,
  stagedPageName,
  stagingFolderKey,
} from './layout';
import {
  chunkText,
  ndjsonOf,
  parseChunk,
  resolveStagedPages,
  rowsOf,
  type StagedPageRows,
  type StagedPages,
} from './staged-objects';

export { StagingMissingError } from './destination';

/** The block that writes a chunk: its first offset and its activity's attempt (see resolveStagedPages). */
export interface ChunkWriter {
  blockOffset: number;
  attempt: number;
}

/**
 * The staging area of one export under `.staging/<export>/`: NDJSON objects, each written whole, so a retried or
 * duplicated write rewrites the same object and a reader never sees half of one. A page activity stages one page
 * as `page-<offset>.ndjson`; a block of pages stages consecutive pages together as chunks
 * (`chunk-<blockOffset>-<attempt>-<firstOffset>-<pages>.ndjson`: a header line listing each page's offset and
 * rows, then their rows). The merge finds each page's object from one listing (stagedPages).
 */
export class ExportStaging {
  readonly destination: ExportDestination;

  constructor(
    destination: ExportDestination | string,
    private readonly exportKey: string,
  ) {
    this.destination = typeof destination === 'string' ? new LocalDestination(destination) : destination;
  }

  private get folder(): string {
    return stagingFolderKey(this.exportKey);
  }

  /** Makes the area ready; pages are only written into a prepared one (see writePage). */
  async prepare(): Promise<void> {
    await this.destination.prepareStaging(this.folder);
  }

  /** StagingMissingError when the area is not prepared: cleaned up already, or another destination. */
  async writePage(offset: number, rows: readonly VisitorRow[], signal?: AbortSignal): Promise<void> {
    await this.destination.stage(this.folder, stagedPageName(offset), ndjsonOf(rows), signal);
  }

  /**
   * Writes consecutive pages, in offset order, as one object (one write, one read for the merge); like a page,
   * StagingMissingError when the area is not prepared.
   */
  async writeChunk(
    writer: ChunkWriter,
    pages: readonly StagedPageRows[],
    signal?: AbortSignal,
  ): Promise<void> {
    const first = pages[0];
    if (first === undefined) throw new InvariantError('a staged chunk holds at least one page');
    const name = stagedChunkName({ ...writer, firstOffset: first.offset, pages: pages.length });
    await this.destination.stage(this.folder, name, chunkText(pages), signal);
  }

  /**
   * A staged page object's rows (`page-<offset>`), read whole: a page holds at most MAX_PAGE_SIZE rows, and one
   * read and one parse per page cost the merge far less than a line reader's promise per row.
   */
  async readPage(offset: number, signal?: AbortSignal): Promise<VisitorRow[]> {
    return rowsOf(await this.#text(stagedPageName(offset), signal));
  }

  /**
   * The pages of one staged object (a page object or a chunk), read whole. `signal` stops the read (the merge
   * aborts the objects it read ahead when it fails).
   */
  async readObject(name: string, signal?: AbortSignal): Promise<StagedPageRows[]> {
    const text = await this.#text(name, signal);
    if (parseStagedChunkName(name) !== undefined) return parseChunk(name, text);
    const offset = parseStagedPageName(name);
    if (offset === undefined) throw new InvariantError(`${name} is neither a staged page nor a chunk`);
    return [{ offset, rows: rowsOf(text) }];
  }

  /** Which object holds each of `offsets` (the export's pages, in order), from one listing; or those none holds. */
  async stagedPages(offsets: readonly number[]): Promise<StagedPages> {
    return resolveStagedPages(await this.destination.listStaged(this.folder), offsets);
  }

  /** Offsets among `offsets` (the export's pages, in order) that no staged object holds. */
  async missingPages(offsets: readonly number[]): Promise<number[]> {
    const staged = await this.stagedPages(offsets);
    return staged.found ? [] : staged.missing;
  }

  /** Where the area is, as a path or an s3:// URI. */
  get directory(): string {
    return this.destination.location(this.folder);
  }

  async remove(): Promise<void> {
    await this.destination.removeStaging(this.folder);
  }

  async #text(name: string, signal?: AbortSignal): Promise<string> {
    const input = await this.destination.readStaged(`${this.folder}/${name}`);
    return textOf(signal ? addAbortSignal(signal, input) : input);
  }
}

async function textOf(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Removes staging areas untouched for `olderThanMs`: those of exports that were terminated or timed out and so
 * never cleaned up after themselves. Returns the names removed.
 */
export function pruneStaleStaging(
  destination: ExportDestination | string,
  olderThanMs: number,
  now = Date.now(),
): Promise<string[]> {
  const target = typeof destination === 'string' ? new LocalDestination(destination) : destination;
  return target.pruneStaleStaging(olderThanMs, now);
}
