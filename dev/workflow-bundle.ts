import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, type ReplayWorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { workflowMetricsSinks } from '../src/operations/metrics';
import { WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS, WORKFLOW_INTERCEPTOR_MODULES } from '../src/worker';

const ROOT = path.resolve(__dirname, '..');
/** What a bundle depends on: the sources it may import, the SDK's and webpack's versions, and how it is built. */
const INPUTS = ['src', 'package-lock.json', path.relative(ROOT, __filename)];
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'workflow-bundles');
const KEPT_BUNDLES = 5;
/** A .partial file this old was left by a process that died while writing it. */
const ABANDONED_PARTIAL_MS = 3_600_000;

/** Per kind: the default bundle, and the traced one (with the tracing workflow interceptors). */
const built = new Map<boolean, Promise<string>>();

/**
 * The workflow bundle of the sources as they are now, built once and then reused by every test file and every
 * worker process of the test stacks and benchmarks (webpack takes seconds of CPU, and loaded into a worker
 * process it stays in its RSS: production workers load a prebuilt bundle, `npm run build`). The file is named
 * after a hash of its inputs, so an edit under src/ builds a new one and a stale bundle is never used.
 * Computed once per process: a process never switches bundles when the sources change under it.
 */
export function workflowBundlePath(options: { traced?: boolean } = {}): Promise<string> {
  const traced = options.traced ?? false;
  let file = built.get(traced);
  if (!file) {
    file = cachedOrBuilt(traced);
    built.set(traced, file);
  }
  return file;
}

const bundles = new Map<boolean, Promise<WorkflowBundle>>();

/** The cached bundle's code, read once per process (in-process workers and replay tests). */
export function workflowBundle(options: { traced?: boolean } = {}): Promise<WorkflowBundle> {
  const traced = options.traced ?? false;
  let bundle = bundles.get(traced);
  if (!bundle) {
    bundle = workflowBundlePath({ traced }).then(async (file) => ({ code: await fs.readFile(file, 'utf8') }));
    bundles.set(traced, bundle);
  }
  return bundle;
}

/** What Worker.runReplayHistory needs: the bundle, and the sinks its workflows call (never while replaying). */
export async function replayOptions(): Promise<ReplayWorkerOptions> {
  return { workflowBundle: await workflowBundle(), sinks: workflowMetricsSinks(undefined) };
}

async function cachedOrBuilt(traced: boolean): Promise<string> {
  const file = path.join(CACHE_DIR, `${await contentKey(ROOT, INPUTS)}${traced ? '-traced' : ''}.js`);
  try {
    // Touched on use, so that pruning removes the bundles no one has used for longest.
    const now = new Date();
    await fs.utimes(file, now, now);
    return file;
  } catch {
    const code = await bundleQuietly(WORKFLOWS_PATH, traced ? WORKFLOW_INTERCEPTOR_MODULES : []);
    await fs.mkdir(CACHE_DIR, { recursive: true });
    // Written whole, then renamed: a process reading the cache never sees half a bundle.
    const partial = `${file}.${crypto.randomUUID()}.partial`;
    await fs.writeFile(partial, code);
    await fs.rename(partial, file);
    await pruneCache(file);
    return file;
  }
}

/** Keeps the bundles used last (other checkouts' or branches' sources), not one per edit ever made. */
async function pruneCache(keep: string): Promise<void> {
  const entries = await Promise.all(
    (await fs.readdir(CACHE_DIR)).map(async (name) => {
      const file = path.join(CACHE_DIR, name);
      return { file, mtimeMs: (await fs.stat(file).catch(() => undefined))?.mtimeMs ?? 0 };
    }),
  );
  // Another process may be writing a .partial file right now: only abandoned ones go.
  const abandoned = entries.filter(
    ({ file, mtimeMs }) => file.endsWith('.partial') && Date.now() - mtimeMs > ABANDONED_PARTIAL_MS,
  );
  const older = entries
    .filter(({ file }) => file.endsWith('.js') && file !== keep)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(KEPT_BUNDLES - 1);
  await Promise.all([...abandoned, ...older].map(({ file }) => fs.rm(file, { force: true })));
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

/** The bundle's code of the workflows at `workflowsPath` (with those interceptors); webpack reports only errors. */
export async function bundleQuietly(
  workflowsPath: string,
  workflowInterceptorModules: string[] = [],
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules,
    logger: quietLogger,
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  return code;
}

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
