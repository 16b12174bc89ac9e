import { addAbortSignal, type Readable } from 'node:stream';
import type { VisitorRow } from '../contract/visitors-export';
import type { ExportDestination } from './destination';
import { LocalDestination } from './local-destination';
import { stagedPageName, stagingFolderKey } from './layout';

export { StagingMissingError } from './destination';

/**
 * The staging area of one export: one NDJSON object per offset page under `.staging/<export>/`. Each page is
 * written whole, so a retried or duplicated page activity rewrites the same object and a reader never sees half
 * a page.
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
    const lines = rows.map((row) => `${JSON.stringify(row)}\n`).join('');
    await this.destination.stage(this.folder, stagedPageName(offset), lines, signal);
  }

  /**
   * A staged page's rows, read whole: a page holds at most MAX_PAGE_SIZE rows, and one read and one parse per
   * page cost the merge far less than a line reader's promise per row. `signal` stops the read (the merge
   * aborts the pages it read ahead when it fails).
   */
  async readPage(offset: number, signal?: AbortSignal): Promise<VisitorRow[]> {
    const input = await this.destination.readStaged(`${this.folder}/${stagedPageName(offset)}`);
    return rowsOf(await textOf(signal ? addAbortSignal(signal, input) : input));
  }

  /** Offsets among `offsets` that have no staged page (written elsewhere, or removed). */
  async missingPages(offsets: readonly number[]): Promise<number[]> {
    const staged = await this.destination.listStaged(this.folder);
    return offsets.filter((offset) => !staged.has(stagedPageName(offset)));
  }

  /** Where the area is, as a path or an s3:// URI. */
  get directory(): string {
    return this.destination.location(this.folder);
  }

  async remove(): Promise<void> {
    await this.destination.removeStaging(this.folder);
  }
}

async function textOf(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The rows of a staged page's text: one JSON object a line (the line breaks of node:readline), blanks skipped. */
function rowsOf(text: string): VisitorRow[] {
  const rows: VisitorRow[] = [];
  // JSON.stringify escapes every CR, so a page holds none unless something else wrote it: split on LF alone.
  for (const line of text.includes('\r') ? text.split(LINE_BREAK) : text.split('\n')) {
    if (line !== '') rows.push(JSON.parse(line) as VisitorRow);
  }
  return rows;
}

const LINE_BREAK = /\r\n|\n|\r/;

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
