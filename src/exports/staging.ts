import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { VisitorRow } from '../contract/visitors-export';
import { writeFileAtomic } from './atomic-file';
import { stagedPagePath, stagingDirectory, stagingRoot } from './layout';

/** The staging directory is gone (the export was cleaned up) or was never on this host's EXPORT_DIR. */
export class StagingMissingError extends Error {
  override readonly name = 'StagingMissingError';
}

/**
 * The staging area of one export: one NDJSON file per offset page. Each page is written atomically, so a
 * retried or duplicated page activity rewrites the same whole file and a reader never sees half a page.
 */
export class ExportStaging {
  constructor(
    private readonly exportDir: string,
    private readonly exportKey: string,
  ) {}

  /** Creates the directory; pages are only written into an existing one (see writePage). */
  async prepare(): Promise<void> {
    await fs.mkdir(this.directory, { recursive: true });
  }

  /**
   * Never creates the directory: a page that finishes after its export was cleaned up (a cancelled page past
   * the end, say) fails instead of leaving a stray file, and so does a host that does not share EXPORT_DIR.
   */
  async writePage(offset: number, rows: readonly VisitorRow[]): Promise<void> {
    const lines = rows.map((row) => `${JSON.stringify(row)}\n`).join('');
    try {
      await writeFileAtomic(stagedPagePath(this.exportDir, this.exportKey, offset), lines, {
        createDirectory: false,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new StagingMissingError(
        `staging directory ${this.directory} does not exist: the export was cleaned up, or EXPORT_DIR is not ` +
          'one volume shared by every worker host',
      );
    }
  }

  async *readPage(offset: number): AsyncGenerator<VisitorRow> {
    const input = createReadStream(stagedPagePath(this.exportDir, this.exportKey, offset), 'utf8');
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (line !== '') yield JSON.parse(line) as VisitorRow;
    }
  }

  /** Offsets among `offsets` that have no staged file (written on another host's disk, or removed). */
  async missingPages(offsets: readonly number[]): Promise<number[]> {
    const missing: number[] = [];
    for (const offset of offsets) {
      try {
        await fs.access(stagedPagePath(this.exportDir, this.exportKey, offset));
      } catch {
        missing.push(offset);
      }
    }
    return missing;
  }

  get directory(): string {
    return stagingDirectory(this.exportDir, this.exportKey);
  }

  async remove(): Promise<void> {
    await fs.rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * Removes staging areas untouched for `olderThanMs`: those of exports that were terminated or timed out and so
 * never cleaned up after themselves. Returns the names removed.
 */
export async function pruneStaleStaging(
  exportDir: string,
  olderThanMs: number,
  now = Date.now(),
): Promise<string[]> {
  const root = stagingRoot(exportDir);
  const entries = await fs.readdir(root, { withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(root, entry.name);
    const stat = await fs.stat(dir).catch(() => undefined);
    if (stat && now - stat.mtimeMs > olderThanMs) {
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(entry.name);
    }
  }
  return removed;
}
