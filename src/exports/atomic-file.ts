import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** A temporary name beside the target: rename() within one directory is atomic on POSIX file systems. */
export function temporaryPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** A name temporaryPathFor gives: a file being written (or one a crash left), never a final one. */
export function isTemporaryName(name: string): boolean {
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
