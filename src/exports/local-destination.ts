import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  destinationUnavailable,
  stagingMissing,
  type ExportDestination,
  type FinalObjectWriter,
} from './destination';
import { isStagingKey, STAGING_FOLDER } from './layout';

/**
 * errno codes another attempt cannot fix: the disk or quota is full, the file system is read-only, a permission is
 * missing, or a directory or file stands where the other is needed.
 */
const REFUSED_ERRNO = new Set('ENOSPC EDQUOT EROFS EACCES EPERM EISDIR ENOTDIR EEXIST'.split(' '));

/**
 * A local directory (EXPORT_DIR a path): every file is written under a temporary name, fsynced and renamed, so a
 * reader never sees a part. Several worker hosts need it to be one shared volume (NFS, EFS).
 */
export class LocalDestination implements ExportDestination {
  readonly root: string;

  constructor(directory: string) {
    this.root = path.resolve(directory);
  }

  location(key: string): string {
    return path.join(this.root, key);
  }

  /** Writes (fsynced) and removes a small file, so that a full or read-only disk fails the export before any page. */
  async probe(): Promise<void> {
    // A temporary file's name: listFinal never lists it, should a crash leave it behind.
    const probe = temporaryPathFor(this.location('.probe'));
    await this.#writing(path.basename(probe), async () => {
      await fs.mkdir(this.root, { recursive: true });
      await writeFileAtomic(probe, 'probe\n', { createDirectory: false });
      await fs.rm(probe);
    });
  }

  async prepareStaging(folder: string): Promise<void> {
    await this.#writing(folder, () => fs.mkdir(this.location(folder), { recursive: true }));
  }

  async stage(folder: string, name: string, content: string): Promise<void> {
    try {
      // Never creates the directory: a page that finishes after its export was cleaned up (a cancelled page past
      // the end, say) fails instead of leaving a stray file, and so does a host that does not share EXPORT_DIR.
      await this.#writing(`${folder}/${name}`, () =>
        writeFileAtomic(path.join(this.location(folder), name), content, { createDirectory: false }),
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw stagingMissing(
        `staging directory ${this.location(folder)} does not exist: the export was cleaned up, or EXPORT_DIR is ` +
          'not one volume shared by every worker host',
      );
    }
  }

  async removeStaging(folder: string): Promise<void> {
    await fs.rm(this.location(folder), { recursive: true, force: true });
  }

  async pruneStaleStaging(olderThanMs: number, now = Date.now()): Promise<string[]> {
    const root = this.location(STAGING_FOLDER);
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

  async openFinal(key: string): Promise<FinalObjectWriter> {
    const file = await this.#writing(key, () => openAtomicFile(this.location(key)));
    let bytes = 0;
    return {
      write: (chunk) => {
        bytes += Buffer.byteLength(chunk);
        return this.#writing(key, () => file.write(chunk));
      },
      commit: () => this.#writing(key, () => file.commit()).then(() => bytes),
      abort: () => file.abort(),
    };
  }

  async writeFinal(key: string, content: string): Promise<void> {
    await this.#writing(key, () => writeFileAtomic(this.location(key), content));
  }

  async removeFinal(key: string): Promise<void> {
    await this.#writing(key, () => fs.rm(this.location(key), { force: true }));
  }

  async listFinal(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      const entries = await fs.readdir(this.location(folder), { withFileTypes: true }).catch(missingAs([]));
      for (const entry of entries) {
        const key = `${folder}${entry.name}`;
        if (isStagingKey(key) && !isStagingKey(prefix)) continue;
        if (entry.isDirectory()) {
          if (`${key}/`.startsWith(prefix)) await walk(`${key}/`);
        } else if (entry.isFile() && key.startsWith(prefix) && !isTemporaryName(entry.name)) {
          keys.push(key);
        }
      }
    };
    // From the prefix's folder: `acme/2026` lists `acme/` and keeps what starts with the prefix, as S3 does.
    await walk(prefix.slice(0, prefix.lastIndexOf('/') + 1));
    return keys.sort();
  }

  async readFinal(key: string): Promise<string | undefined> {
    return fs.readFile(this.location(key), 'utf8').catch(missingAs(undefined));
  }

  /** `work` on `key`, its refusals that another attempt cannot fix as destinationUnavailable. */
  async #writing<T>(key: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const { code, syscall } = error as NodeJS.ErrnoException;
      if (code === undefined || !REFUSED_ERRNO.has(code)) throw error;
      throw destinationUnavailable(
        `export directory ${this.root} cannot be written (${code}: ${syscall ?? 'write'} ${key})`,
      );
    }
  }
}

/** A rejection handler that answers `value` for a path that is not there, and rethrows anything else. */
function missingAs<T>(value: T): (error: unknown) => T {
  return (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return value;
    throw error;
  };
}

/** A temporary name beside the target: rename() within one directory is atomic on POSIX file systems. */
export function temporaryPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** A name temporaryPathFor gives: a file being written (or one a crash left), never a final one. */
function isTemporaryName(name: string): boolean {
  return /^\..+\.[0-9a-f]{12}\.tmp$/.test(name);
}

/** `createDirectory`: create the target's directory when missing (default true); false fails with ENOENT instead. */
type AtomicWriteOptions = { createDirectory?: boolean };

/** Writes a file so that readers see either the old content or the whole new content, never a part. */
export async function writeFileAtomic(
  target: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const file = await openAtomicFile(target, options);
  try {
    await file.write(content);
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
}

const FLUSH_BYTES = 1 << 20;

/**
 * A file written under a temporary name and renamed over `target` by `commit` (after fsync, so that a crash
 * right after the rename cannot leave an empty file behind the new name). `abort` removes the temporary file.
 */
export async function openAtomicFile(target: string, options: AtomicWriteOptions = {}) {
  if (options.createDirectory !== false) await fs.mkdir(path.dirname(target), { recursive: true });
  const tmp = temporaryPathFor(target);
  const handle = await fs.open(tmp, 'w');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let closed = false;
  const flush = async (): Promise<void> => {
    const buffer = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    // write() may write less than asked: loop until the whole buffer is on disk.
    for (let offset = 0; offset < buffer.length;) {
      const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  return {
    async write(chunk: string | Uint8Array): Promise<void> {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
      pending.push(buffer);
      pendingBytes += buffer.length;
      if (pendingBytes >= FLUSH_BYTES) await flush();
    },
    async commit(): Promise<void> {
      await flush();
      await handle.sync();
      await close();
      await fs.rename(tmp, target);
    },
    async abort(): Promise<void> {
      await close().catch(() => undefined);
      await fs.rm(tmp, { force: true });
    },
  };
}
