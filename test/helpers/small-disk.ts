import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';
import { tempDir } from './temp-dir';

const run = promisify(execFile);

/** A test's `skip` option: mounting a tmpfs needs root; skipped without it, except under CI=true, where the test then fails. */
export function smallDiskSkipped(): string | false {
  if (process.getuid?.() === 0 || process.env.CI === 'true') return false;
  return 'a small disk is a tmpfs mount, which needs root (CI=true makes this a failure)';
}

/** A real file system of `bytes` (a tmpfs, in 4 KiB pages), mounted at a fresh directory. */
export interface SmallDisk {
  dir: string;
  /** Writes a file that takes every byte left. */
  fill(): Promise<void>;
  /** Removes every file. */
  empty(): Promise<void>;
  /** Mounts it again read-only (`false`: writable again). */
  readOnly(on?: boolean): Promise<void>;
  unmount(): Promise<void>;
}

export async function mountSmallDisk(bytes: number): Promise<SmallDisk> {
  const dir = await tempDir('small-disk');
  await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  return {
    dir,
    async fill() {
      const file = await fs.open(`${dir}/filler`, 'w');
      try {
        for (;;) await file.write(Buffer.alloc(4096));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        await file.close();
      }
    },
    async empty() {
      for (const name of await fs.readdir(dir)) await fs.rm(`${dir}/${name}`, { recursive: true });
    },
    async readOnly(on = true) {
      await run('mount', ['-o', `remount,${on ? 'ro' : 'rw'}`, dir]);
    },
    async unmount() {
      await run('umount', ['--lazy', dir]);
    },
  };
}
