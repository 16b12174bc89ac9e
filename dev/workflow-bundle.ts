import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../src/worker';

const ROOT = path.resolve(__dirname, '..');
/** Everything a bundle is made of: the sources it may import, and the versions of the SDK and the bundler. */
const INPUTS = ['src', 'package-lock.json', 'tsconfig.json'];
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'workflow-bundles');
const KEPT_BUNDLES = 5;

/**
 * The workflow bundle of the sources as they are now, built once and then reused by every test file and every
 * worker process of the test stacks and benchmarks (webpack takes seconds of CPU, and loaded into a worker
 * process it stays in its RSS: production workers load a prebuilt bundle, `npm run build`). The file is named
 * after a hash of its inputs, so an edit under src/ builds a new one and a stale bundle is never used.
 */
export async function workflowBundlePath(): Promise<string> {
  const file = path.join(CACHE_DIR, `${await contentKey(ROOT, INPUTS)}.js`);
  try {
    await fs.access(file);
    return file;
  } catch {
    const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
    await fs.mkdir(CACHE_DIR, { recursive: true });
    // Written whole, then renamed: a process reading the cache never sees half a bundle.
    const partial = `${file}.${process.pid}.partial`;
    await fs.writeFile(partial, code);
    await fs.rename(partial, file);
    await pruneCache(file);
    return file;
  }
}

/** Keeps the newest bundles (other checkouts' or branches' sources), not one per edit ever made. */
async function pruneCache(keep: string): Promise<void> {
  const files = await Promise.all(
    // Only whole bundles: another process may be writing its .partial file.
    (await fs.readdir(CACHE_DIR))
      .filter((name) => name.endsWith('.js'))
      .map(async (name) => {
        const file = path.join(CACHE_DIR, name);
        return { file, mtimeMs: (await fs.stat(file).catch(() => undefined))?.mtimeMs ?? 0 };
      }),
  );
  const old = files.filter(({ file }) => file !== keep).sort((a, b) => b.mtimeMs - a.mtimeMs);
  await Promise.all(old.slice(KEPT_BUNDLES - 1).map(({ file }) => fs.rm(file, { force: true })));
}

let bundle: Promise<WorkflowBundle> | undefined;

/** The cached bundle's code, read once per process (in-process workers and replay tests). */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= workflowBundlePath().then(async (file) => ({ code: await fs.readFile(file, 'utf8') }));
  return bundle;
}

/** A hash of the names and contents of every file in `inputs` (files or directories, relative to `root`). */
export async function contentKey(root: string, inputs: readonly string[]): Promise<string> {
  const hash = crypto.createHash('sha256');
  for (const input of inputs) {
    for (const file of await filesUnder(path.join(root, input))) {
      const content = await fs.readFile(file);
      hash.update(`${path.relative(root, file)}\0${content.length}\0`).update(content);
    }
  }
  return hash.digest('hex').slice(0, 32);
}

async function filesUnder(entry: string): Promise<string[]> {
  const stat = await fs.stat(entry);
  if (!stat.isDirectory()) return [entry];
  const names = (await fs.readdir(entry)).sort();
  const nested = await Promise.all(names.map((name) => filesUnder(path.join(entry, name))));
  return nested.flat();
}

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
