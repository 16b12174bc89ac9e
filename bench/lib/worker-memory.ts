import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cachedWorkflowHeaps, type CachedWorkflowHeap } from './cached-workflow-heap';
import { readHeapSnapshot } from './heap-snapshot';
import { memoryOf } from './process-stats';
import { median } from './stats';

// A worker process's memory as the memory benchmark reads it: RSS from /proc, and through HEAP_PRELOAD (with
// HEAP_SNAPSHOT_DIR in its environment) the V8 heap of each of its threads, a full GC, and heap snapshots.

/** RSS sampled a second apart, the median: one sample can land before or after a GC. */
export async function settledRssMiB(pid: number, count: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    await sleep(1000);
    samples.push(memoryOf(pid).rssMiB);
  }
  return median(samples);
}

export const HEAP_PRELOAD = path.join(__dirname, 'heap-snapshot-preload.cjs');

interface ThreadHeap {
  committedMiB: number;
  usedMiB: number;
  afterGc: string | null;
}

/** The V8 heap of each thread of the worker, by file, as bench/lib/heap-snapshot-preload.cjs last wrote them. */
async function v8Heaps(dir: string): Promise<Map<string, ThreadHeap>> {
  const files = (await fs.readdir(dir)).filter((file) => /^thread-\d+\.json$/.test(file));
  const heaps = new Map<string, ThreadHeap>();
  for (const file of files) {
    const stats = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as {
      total_physical_size: number;
      used_heap_size: number;
      afterGc: string | null;
    };
    heaps.set(file, {
      committedMiB: stats.total_physical_size / 2 ** 20,
      usedMiB: stats.used_heap_size / 2 ** 20,
      afterGc: stats.afterGc,
    });
  }
  return heaps;
}

/** A full GC in every thread of the worker; then its RSS and V8 heaps. */
export async function afterFullGc(dir: string, pid: number, name: string, rssSamples: number) {
  await fs.writeFile(path.join(dir, `gc-${name}`), '');
  const deadline = Date.now() + 60_000;
  for (;;) {
    await sleep(500);
    const heaps = await v8Heaps(dir);
    if ([...heaps.values()].every((heap) => heap.afterGc === `gc-${name}`)) break;
    if (Date.now() > deadline) throw new Error(`the worker's threads did not collect (${name})`);
  }
  const rssMiB = await settledRssMiB(pid, rssSamples);
  return { rssMiB, heaps: await v8Heaps(dir) };
}

/** Growth per workflow after a GC: RSS, V8 heaps committed, used in the workflow thread (the most) and the rest. */
export function growthAfterGc(
  idle: Awaited<ReturnType<typeof afterFullGc>>,
  loaded: Awaited<ReturnType<typeof afterFullGc>>,
  workflows: number,
) {
  const kib = (mib: number) => (mib * 1024) / workflows;
  const growth = [...loaded.heaps].map(([file, heap]) => ({
    committed: heap.committedMiB - (idle.heaps.get(file)?.committedMiB ?? 0),
    used: heap.usedMiB - (idle.heaps.get(file)?.usedMiB ?? 0),
  }));
  const workflowThread = Math.max(...growth.map((thread) => thread.used));
  const used = growth.reduce((sum, thread) => sum + thread.used, 0);
  return {
    rssKiB: kib(loaded.rssMiB - idle.rssMiB),
    committedKiB: kib(growth.reduce((sum, thread) => sum + thread.committed, 0)),
    workflowThreadUsedKiB: kib(workflowThread),
    otherThreadsUsedKiB: kib(used - workflowThread),
  };
}

/** Every thread writes its snapshot; the one holding cached workflows is the workflow thread's. */
export async function snapshotWorkflowThread(dir: string): Promise<CachedWorkflowHeap[]> {
  const threads = (await fs.readdir(dir)).filter((file) => /^thread-\d+\.json$/.test(file)).length;
  await fs.writeFile(path.join(dir, 'take'), '');
  const deadline = Date.now() + 300_000;
  let snapshots: string[] = [];
  while (snapshots.length < threads) {
    if (Date.now() > deadline) throw new Error(`${snapshots.length} of ${threads} heap snapshots written`);
    await sleep(1000);
    snapshots = (await fs.readdir(dir)).filter((file) => file.endsWith('.heapsnapshot'));
  }
  for (const file of snapshots) {
    const heaps = cachedWorkflowHeaps(readHeapSnapshot(path.join(dir, file)));
    if (heaps.length > 0) return heaps;
  }
  throw new Error('no thread of the worker holds a cached workflow');
}
