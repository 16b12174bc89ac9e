import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startAgentJob } from '../src/client/agent-job';
import { DEFAULT_TASK_QUEUE } from '../src/contract/names';
import type { CachedWorkflowHeap } from './lib/cached-workflow-heap';
import { mapPool } from './lib/pool';
import { markdownTable } from './lib/report';
import { startProcessStack, workerPid, type Stack } from '../dev/stack';
import type { WorkerProcess } from '../dev/worker-process';
import { bundleQuietly } from '../dev/workflow-bundle';
import { median, spread } from './lib/stats';
import {
  afterFullGc,
  growthAfterGc,
  HEAP_PRELOAD,
  settledRssMiB,
  snapshotWorkflowThread,
} from './lib/worker-memory';

const MEMORY_WORKFLOWS = path.join(__dirname, 'memory-workflows');
const IDLE_WORKFLOW = 'idleWorkflow';
/** No poll while memory is read: the job waits on its first timer. */
const IDLE_POLLING = { initialInterval: '10m', maxInterval: '10m' } as const;

export interface MemoryVariant {
  label: string;
  /** Workflows module bundled for this variant, in bench/memory-workflows. */
  module: 'sdk-only' | 'with-zod' | 'in-project-bundle' | 'agent-job-only';
  workflow: typeof IDLE_WORKFLOW | 'agentJob';
}

export const MEMORY_VARIANTS: MemoryVariant[] = [
  { label: 'idle workflow, only `@temporalio/workflow`', module: 'sdk-only', workflow: IDLE_WORKFLOW },
  { label: 'idle workflow with one zod schema', module: 'with-zod', workflow: IDLE_WORKFLOW },
  {
    label: "idle workflow in this project's bundle",
    module: 'in-project-bundle',
    workflow: IDLE_WORKFLOW,
  },
  { label: '`agentJob` waiting for its next poll', module: 'in-project-bundle', workflow: 'agentJob' },
  {
    label: '`agentJob`, in a bundle of only the agent-job workflows',
    module: 'agent-job-only',
    workflow: 'agentJob',
  },
];

export interface WorkflowMemoryOptions {
  workflows: number;
  repeats: number;
  /** RSS readings per measurement, a second apart; their median is the figure. */
  rssSamples: number;
  /** More environment for the worker (e.g. an allocator setting to compare). */
  workerEnv?: Record<string, string>;
  /** All of MEMORY_VARIANTS unless given; the first is the baseline of the ratios. */
  variants?: MemoryVariant[];
}
/** Issue 44's scale: 400 active jobs on one worker, each cached (the default cache holds 500). */
export const FULL_MEMORY: WorkflowMemoryOptions = { workflows: 400, repeats: 3, rssSamples: 5 };
/** A smoke test: too few workflows for the figures to mean much beside the GC's noise. */
export const QUICK_MEMORY: WorkflowMemoryOptions = { workflows: 40, repeats: 1, rssSamples: 1 };
/** Issue 44's target for a cached agentJob, RSS over the idle worker. */
export const AGENT_JOB_TARGET_KIB = 500;

export interface WorkflowMemoryRow {
  variant: MemoryVariant;
  bundleBytes: number;
  workflows: number;
  idleMiB: number[];
  loadedMiB: number[];
  /** (loaded - idle) / workflows, per repeat. */
  perWorkflowKiB: number[];
  /** The same after a full GC in every thread, per repeat: RSS, and the V8 heaps of all threads. */
  afterGc: AfterGcKiB[];
  /** The variant's workflows in a heap snapshot of the workflow thread (first repeat). */
  heap?: CachedWorkflowHeap;
}

type AfterGcKiB = ReturnType<typeof growthAfterGc>;

async function startWorkflows(
  stack: Stack<WorkerProcess>,
  variant: MemoryVariant,
  count: number,
): Promise<string[]> {
  const indexes = Array.from({ length: count }, (_, i) => i);
  return mapPool(indexes, 50, async (i) => {
    if (variant.workflow === 'agentJob') {
      // 20 projects keep the creates under the service's 100 per project-hour.
      const input = { projectId: `mem${i % 20}`, prompt: 'Benchmark job', polling: IDLE_POLLING };
      return (await startAgentJob(stack.client, input, { key: `mem-${i}` })).workflowId;
    }
    const handle = await stack.client.workflow.start(IDLE_WORKFLOW, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId: `workflow-memory/${i}`,
    });
    return handle.workflowId;
  });
}

/** Until every workflow has completed a workflow task (so it sits in the worker's cache), or fails loudly. */
async function awaitCached(stack: Stack<WorkerProcess>, workflowIds: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  let pending = workflowIds;
  while (pending.length > 0) {
    if (Date.now() > deadline) throw new Error(`${pending.length} workflows never ran a workflow task`);
    const lengths = await mapPool(pending, 20, async (id) => {
      const history = await stack.client.workflow.getHandle(id).fetchHistory();
      const failed = history.events?.find((event) => event.workflowTaskFailedEventAttributes);
      if (failed) {
        throw new Error(
          `${id}: ${failed.workflowTaskFailedEventAttributes?.failure?.message ?? 'task failed'}`,
        );
      }
      return history.events?.filter((event) => event.workflowTaskCompletedEventAttributes).length ?? 0;
    });
    pending = pending.filter((_, i) => (lengths[i] ?? 0) === 0);
    if (pending.length > 0) await sleep(1000);
  }
}

async function oneRun(
  variant: MemoryVariant,
  bundlePath: string,
  options: WorkflowMemoryOptions & { snapshot: boolean },
) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'workflow-memory-heap-'));
  const stack = await startProcessStack({
    name: 'bench-memory',
    simulator: { jobs: { durationMs: 3_600_000 } },
    workerEnv: {
      WORKER_WORKFLOW_BUNDLE: bundlePath,
      NODE_OPTIONS: `--require ${HEAP_PRELOAD}`,
      HEAP_SNAPSHOT_DIR: dir,
      ...options.workerEnv,
    },
  });
  try {
    const pid = workerPid(stack);
    const samples = Math.max(2, options.rssSamples);
    const idle = await settledRssMiB(pid, samples);
    const idleGc = await afterFullGc(dir, pid, 'idle', samples);
    const ids = await startWorkflows(stack, variant, options.workflows);
    await awaitCached(stack, ids);
    const loaded = await settledRssMiB(pid, samples);
    const loadedGc = await afterFullGc(dir, pid, 'loaded', samples);
    const heaps = options.snapshot ? await snapshotWorkflowThread(dir) : [];
    return {
      idle,
      loaded,
      afterGc: growthAfterGc(idleGc, loadedGc, options.workflows),
      heap: heaps.find((h) => h.workflowType === variant.workflow),
    };
  } finally {
    await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * What a cached workflow costs in the worker's memory: the worker process's RSS with N workflows in its cache
 * against the same process before them, for workflows from bundles of growing size.
 */
export async function workflowMemory(options: WorkflowMemoryOptions): Promise<WorkflowMemoryRow[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'workflow-memory-'));
  try {
    const bundles = new Map<MemoryVariant['module'], { path: string; bytes: number }>();
    const variants = options.variants ?? MEMORY_VARIANTS;
    for (const module of new Set(variants.map((variant) => variant.module))) {
      const code = await bundleQuietly(require.resolve(path.join(MEMORY_WORKFLOWS, module)));
      const bundlePath = path.join(dir, `${module}.js`);
      await fs.writeFile(bundlePath, code);
      bundles.set(module, { path: bundlePath, bytes: Buffer.byteLength(code) });
    }
    const rows: WorkflowMemoryRow[] = variants.map((variant) => ({
      variant,
      bundleBytes: bundles.get(variant.module)?.bytes ?? 0,
      workflows: options.workflows,
      idleMiB: [],
      loadedMiB: [],
      perWorkflowKiB: [],
      afterGc: [],
    }));
    // Interleaved, so that a noisy minute of a shared machine lands on every variant alike.
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const row of rows) {
        const bundle = bundles.get(row.variant.module);
        if (!bundle) throw new Error(`no bundle for ${row.variant.module}`);
        const run = await oneRun(row.variant, bundle.path, { ...options, snapshot: repeat === 0 });
        row.idleMiB.push(run.idle);
        row.loadedMiB.push(run.loaded);
        row.perWorkflowKiB.push(((run.loaded - run.idle) * 1024) / options.workflows);
        row.afterGc.push(run.afterGc);
        if (run.heap) row.heap = run.heap;
      }
    }
    return rows;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export function workflowMemoryTable(rows: WorkflowMemoryRow[]): string {
  const floor = median(rows[0]?.perWorkflowKiB ?? []);
  return markdownTable(
    [
      'workflow',
      'bundle (MB, with source map)',
      'workflows cached',
      'worker RSS before (MiB)',
      'worker RSS with them (MiB)',
      'RSS per cached workflow (KiB)',
      'against the first row',
      'after a full GC: RSS (KiB)',
      'V8 heaps committed (KiB)',
      'V8 used: workflow thread (KiB)',
      'V8 used: other threads (KiB)',
      'retained in the heap snapshot (KiB)',
    ],
    rows.map((row) => [
      row.variant.label,
      (row.bundleBytes / 1e6).toFixed(1),
      row.workflows.toLocaleString('en'),
      spread(row.idleMiB, 0),
      spread(row.loadedMiB, 0),
      spread(row.perWorkflowKiB, 0),
      floor > 0 ? `${(median(row.perWorkflowKiB) / floor).toFixed(1)} x` : 'n/a',
      ...(['rssKiB', 'committedKiB', 'workflowThreadUsedKiB', 'otherThreadsUsedKiB'] as const).map((field) =>
        spread(
          row.afterGc.map((run) => run[field]),
          0,
        ),
      ),
      row.heap ? (row.heap.retainedBytes / 1024).toFixed(1) : 'n/a',
    ]),
  );
}

/** Issue 44's target, on the `agentJob` row. */
export function workflowMemoryVerdict(rows: WorkflowMemoryRow[]): string {
  const agentJob = rows.find((row) => row.variant.workflow === 'agentJob');
  if (!agentJob) return '';
  const kib = median(agentJob.perWorkflowKiB);
  const verdict = kib <= AGENT_JOB_TARGET_KIB ? '**met**' : '**missed**';
  return `Target of issue 44, worker RSS per cached \`agentJob\` at most ${AGENT_JOB_TARGET_KIB} KiB: ${verdict} (${kib.toFixed(0)} KiB).`;
}

/** Per part of a cached workflow's retained heap (bench/lib/cached-workflow-heap.ts), one column per variant. */
export function retainedHeapTable(rows: WorkflowMemoryRow[]): string {
  const measured = rows.filter((row) => row.heap !== undefined);
  const parts = new Map<string, number>();
  for (const row of measured) {
    for (const [part, bytes] of row.heap?.parts ?? []) parts.set(part, Math.max(parts.get(part) ?? 0, bytes));
  }
  const shown = [...parts].filter(([, bytes]) => bytes >= 1024).sort((a, b) => b[1] - a[1]);
  const smaller = (row: WorkflowMemoryRow) =>
    [...(row.heap?.parts ?? [])]
      .filter(([part]) => !shown.some(([s]) => s === part))
      .reduce((sum, [, b]) => sum + b, 0);
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  return markdownTable(
    ['retained by', ...measured.map((row) => `${row.variant.label} (KiB)`)],
    [
      ...shown.map(([part]) => [part, ...measured.map((row) => kib(row.heap?.parts.get(part) ?? 0))]),
      ['smaller parts', ...measured.map((row) => kib(smaller(row)))],
      ['retained per workflow, in all (median)', ...measured.map((row) => kib(row.heap?.retainedBytes ?? 0))],
    ],
  );
}
