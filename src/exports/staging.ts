import { addAbortSignal, type Readable } from 'node:stream';
import { InvariantError } from '../contract/errors';
import type { ExportDestination } from './destination';
import { LocalDestination } from './local-destination';
import { stagedChunkName, stagingFolderKey } from './layout';
import {
  chunkText,
  parseChunk,
  resolveStagedPages,
  type StagedPageRows,
  type StagedPages,
} from './staged-objects';

export { StagingMissingError } from './destination';

/** The page run that writes a chunk: its first offset and the workflow's attempt there (see resolveStagedPages). */
export interface ChunkWriter {
  runOffset: number;
  attempt: number;
}

/**
 * The staging area of one export under `.staging/<export>/`: chunks of consecutive pages
 * (`chunk-<runOffset>-<attempt>-<firstOffset>-<pages>.ndjson`: a header line listing each page's offset and rows,
 * then their rows as NDJSON), each written whole, so a reader never sees half of one and a repeated write rewrites
 * the same object. The merge finds each page's chunk from one listing (stagedPages).
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

  /** Makes the area ready; chunks are only written into a prepared one (see writeChunk). */
  async prepare(): Promise<void> {
    await this.destination.prepareStaging(this.folder);
  }

  /**
   * Writes consecutive pages, in offset order, as one chunk (one write, one read for the merge);
   * StagingMissingError when the area is not prepared: cleaned up already, or another destination.
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
   * The pages of one chunk, read whole. `signal` stops the read (the merge aborts the chunks it read ahead when
   * it fails).
   */
  async readObject(name: string, signal?: AbortSignal): Promise<StagedPageRows[]> {
    return parseChunk(name, await this.#text(name, signal));
  }

  /** Which chunk holds each of `offsets` (the export's pages, in order), from one listing; or those none holds. */
  async stagedPages(offsets: readonly number[]): Promise<StagedPages> {
    return resolveStagedPages(await this.destination.listStaged(this.folder), offsets);
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
