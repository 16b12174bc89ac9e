import type { Readable } from 'node:stream';
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

  async readPage(offset: number): Promise<VisitorRow[]> {
    return rowsOf(await this.openPage(offset));
  }

  /** Starts reading a page (the merge opens a few ahead of the one it writes). */
  openPage(offset: number): Promise<Readable> {
    return this.destination.readStaged(`${this.folder}/${stagedPageName(offset)}`);
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

/**
 * The rows of a staged page, parsed line by line. A page holds at most 250 rows: it is read whole, then parsed
 * without an await per line (the merge reads 100,000 rows in a few hundred milliseconds).
 */
export async function rowsOf(input: Readable): Promise<VisitorRow[]> {
  input.setEncoding('utf8');
  let text = '';
  for await (const chunk of input) text += chunk as string;
  const rows: VisitorRow[] = [];
  for (const line of text.split('\n')) if (line !== '') rows.push(JSON.parse(line) as VisitorRow);
  return rows;
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
