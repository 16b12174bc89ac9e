import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/** A fresh temporary directory, removed after the test file. */
export async function tempDir(name: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${name}-`));
  after(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}
