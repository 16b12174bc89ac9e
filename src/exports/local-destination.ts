import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  destinationUnavailable,
  ExportDestination,
  type FinalObjectWriter,
  type StoredObject,
} from './destination';

/**
 * errno codes another attempt cannot fix: the disk or quota is full, the file system is read-only, a permission is
 * missing, or a directory or file stands where the other is needed.
 */
const REFUSED_ERRNO = new Set('ENOSPC EDQUOT EROFS EACCES EPERM EISDIR ENOTDIR EEXIST'.split(' '));

/**
 * A local directory (EXPORT_DIR a path): every file is written under a temporary name, fsynced and renamed, so a
 * reader never sees a part. Several worker hosts need it to be one shared volume (NFS, EFS).
 */
export class LocalDestination extends ExportDestination {
  readonly root: string;

  constructor(directory: string) {
    super();
    this.root = path.resolve(directory);
  }

  location(key: string): string {
    return path.join(this.root, key);
  }

  async openFinal(key: string): Promise<FinalObjectWriter> {
    const file = await this.#refusing(key, 'written', () => openAtomicFile(this.location(key)));
    return {
      write: (chunk) => this.#refusing(key, 'written', () => file.write(chunk)),
      commit: () => this.#refusing(key, 'written', () => file.commit()),
      abort: () => file.abort(),
    };
  }

  async writeFinal(key: string, content: string): Promise<void> {
    await this.#refusing(key, 'written', () => writeFileAtomic(this.location(key), content));
  }

  /** As in a bucket, a folder lasts only while it holds a file: the folders left empty are removed too. */
  async removeFinal(key: string): Promise<void> {
    await this.#refusing(key, 'written', () => fs.rm(this.location(key), { force: true }));
    for (let folder = path.dirname(key); folder !== '.'; folder = path.dirname(folder)) {
      if (
        !(await fs.rmdir(this.location(folder)).then(
          () => true,
          () => false,
        ))
      )
        return;
    }
  }

  protected async listObjects(prefix: string, withTimes = false): Promise<StoredObject[]> {
    // From the prefix's folder: `acme/2026` lists `acme/` and keeps what starts with the prefix, as S3 does.
    const folder = this.location(prefix.slice(0, prefix.lastIndexOf('/') + 1));
    const entries = await this.#refusing(prefix, 'read', () =>
      fs.readdir(folder, { recursive: true, withFileTypes: true }).catch(missingAs([])),
    );
    const objects: StoredObject[] = [];
    for (const entry of entries) {
      const file = path.join(entry.parentPath, entry.name);
      const key = path.relative(this.root, file).split(path.sep).join('/');
      if (!entry.isFile() || !key.startsWith(prefix) || isTemporaryName(entry.name)) continue;
      if (!withTimes) {
        objects.push({ key });
        continue;
      }
      const stat = await fs.stat(file).catch(missingAs(undefined));
      if (stat !== undefined) objects.push({ key, modifiedMs: stat.mtimeMs });
    }
    return objects;
  }

  async readFinal(key: string): Promise<string | undefined> {
    return this.#refusing(key, 'read', () =>
      fs.readFile(this.location(key), 'utf8').catch(missingAs(undefined)),
    );
  }

  /** `work` on `key`, its refusals that another attempt cannot fix as destinationUnavailable. */
  async #refusing<T>(key: string, use: 'written' | 'read', work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const { code, syscall } = error as NodeJS.ErrnoException;
      if (code === undefined || !REFUSED_ERRNO.has(code)) throw error;
      throw destinationUnavailable(
        `export directory ${this.root} cannot be ${use} (${code}: ${syscall ?? use} ${key})`,
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

/** Writes a file so that readers see either the old content or the whole new content, never a part. */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<void> {
  const file = await openAtomicFile(target);
  try {
    await file.write(content);
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
}

/**
 * A file written under a temporary name and renamed over `target` by `commit` (after fsync, so that a crash
 * right after the rename cannot leave an empty file behind the new name). `abort` removes the temporary file.
 */
export async function openAtomicFile(target: string) {
  await fs.mkdir(path.dirname(target), { recursive: true });
  const tmp = temporaryPathFor(target);
  // A FileHandle closed again resolves: abort may follow a commit that failed at any step.
  const handle = await fs.open(tmp, 'w');
  return {
    // Writes the whole chunk at the current position (write() alone may write less).
    write: (chunk: string | Uint8Array): Promise<void> => handle.writeFile(chunk),
    async commit(): Promise<void> {
      await handle.sync();
      await handle.close();
      await fs.rename(tmp, target);
    },
    async abort(): Promise<void> {
      await handle.close().catch(() => undefined);
      await fs.rm(tmp, { force: true });
    },
  };
}
