import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** A temporary name beside the target: rename() within one directory is atomic on POSIX file systems. */
export function temporaryPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Writes a file so that readers see either the old content or the whole new content, never a part. */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  const tmp = temporaryPathFor(target);
  try {
    await fs.writeFile(tmp, content);
    await fs.rename(tmp, target);
  } catch (error) {
    await fs.rm(tmp, { force: true });
    throw error;
  }
}
