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
 * One export's staging area under `.staging/<export>/`: chunks of consecutive pages
 * (`chunk-<runOffset>-<attempt>-<firstOffset>-<pages>.ndjson`), each written whole.
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

  async prepare(): Promise<void> {
    await this.destination.prepareStaging(this.folder);
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
    await this.destination.stage(this.folder, name, chunkText(pages), signal);
  }

  /** The pages of one chunk, read whole; `signal` stops the read. */
  async readObject(name: string, signal?: AbortSignal): Promise<StagedPageRows[]> {
    return parseChunk(name, await this.#text(name, signal));
  }

  /** Which chunk holds each of `offsets`, or those none holds. */
  async stagedPages(offsets: readonly number[]): Promise<StagedPages> {
    return resolveStagedPages(await this.destination.listStaged(this.folder), offsets);
  }

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
