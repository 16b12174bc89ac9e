import v8 from 'node:v8';

/** The worker's heap besides the sticky cache: an idle worker process is about 230 MB RSS (docs/benchmarks.md). */
export const WORKER_BASE_HEAP_MIB = 256;
/**
 * Heap budgeted per cached workflow: a cached `agentJob` holds about 0.4 MiB ("Memory per cached workflow"),
 * doubled so the cache takes at most half of the heap beyond the base and the collector has room.
 */
export const MIB_PER_CACHED_WORKFLOW = 0.8;
/**
 * The largest default: with a cache of 500, one worker held 5,000 active jobs at a peak of 800 MB RSS
 * ("Agent jobs at scale"). A larger cache buys nothing at that scale (polls make no workflow task, so an evicted
 * job is replayed only for a follow-up, a status change or its end) and would pass 1 GB.
 */
export const MAX_DEFAULT_CACHED_WORKFLOWS = 500;
/** The SDK's own floor for its default. */
export const MIN_DEFAULT_CACHED_WORKFLOWS = 10;

/**
 * WORKER_MAX_CACHED_WORKFLOWS when unset, sized to the V8 heap limit as the SDK sizes its own default (whose
 * formula assumes about 1.7 MiB per workflow and no upper bound: 2,310 on a 4 GiB heap, more than 1 GB of RSS
 * here). A heap capped small (`--max-old-space-size`, a container's NODE_OPTIONS) gets a smaller cache.
 */
export function defaultMaxCachedWorkflows(heapLimitMiB: number = heapSizeLimitMiB()): number {
  const fits = Math.floor((heapLimitMiB - WORKER_BASE_HEAP_MIB) / MIB_PER_CACHED_WORKFLOW);
  return Math.min(MAX_DEFAULT_CACHED_WORKFLOWS, Math.max(MIN_DEFAULT_CACHED_WORKFLOWS, fits));
}

export function heapSizeLimitMiB(): number {
  return v8.getHeapStatistics().heap_size_limit / 2 ** 20;
}
