import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startAgentJob } from '../src/client/agent-job';
import { DEFAULT_TASK_QUEUE } from '../src/contract/names';
import { mapPool } from './lib/pool';
import { memoryOf } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { startProcessStack, workerPid, type Stack } from '../dev/stack';
import type { WorkerProcess } from '../dev/worker-process';
import { bundleQuietly } from '../dev/workflow-bundle';
import { median, spread } from './lib/stats';

const MEMORY_WORKFLOWS = path.join(__dirname, 'memory-workflows');
const IDLE_WORKFLOW = 'idleWorkflow';
/** No poll while memory is read: the job waits on its first timer. */
const IDLE_POLLING = { initialInterval: '10m', maxInterval: '10m' } as const;

export interface MemoryVariant {
  label: string;
  /** Workflows module bundled for this variant, in bench/memory-workflows. */
  module: 'sdk-only' | 'with-zod' | 'in-project-bundle';
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
];

export interface WorkflowMemoryOptions {
  workflows: number;
  repeats: number;
  /** RSS readings per measurement, a second apart; their median is the figure. */
  rssSamples: number;
}
export const FULL_MEMORY: WorkflowMemoryOptions = { workflows: 500, repeats: 3, rssSamples: 5 };
/** A smoke test: too few workflows for the figures to mean much beside the GC's noise. */
export const QUICK_MEMORY: WorkflowMemoryOptions = { workflows: 40, repeats: 1, rssSamples: 1 };

export interface WorkflowMemoryRow {
  variant: MemoryVariant;
  bundleBytes: number;
  workflows: number;
  idleMiB: number[];
  loadedMiB: number[];
  /** (loaded - idle) / workflows, per repeat. */
  perWorkflowKiB: number[];
}

/** RSS sampled a second apart, the median: one sample can land before or after a GC. */
async function settledRssMiB(pid: number, count: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    await sleep(1000);
    samples.push(memoryOf(pid).rssMiB);
  }
  return median(samples);
}

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

async function oneRun(variant: MemoryVariant, bundlePath: string, options: WorkflowMemoryOptions) {
  const stack = await startProcessStack({
    name: 'bench-memory',
    simulator: { jobs: { durationMs: 3_600_000 } },
    workerEnv: { WORKER_WORKFLOW_BUNDLE: bundlePath },
  });
  try {
    const pid = workerPid(stack);
    const idle = await settledRssMiB(pid, options.rssSamples);
    const ids = await startWorkflows(stack, variant, options.workflows);
    await awaitCached(stack, ids);
    const loaded = await settledRssMiB(pid, options.rssSamples);
    return { idle, loaded };
  } finally {
    await stack.stop();
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
    for (const module of new Set(MEMORY_VARIANTS.map((variant) => variant.module))) {
      const code = await bundleQuietly(require.resolve(path.join(MEMORY_WORKFLOWS, module)));
      const bundlePath = path.join(dir, `${module}.js`);
      await fs.writeFile(bundlePath, code);
      bundles.set(module, { path: bundlePath, bytes: Buffer.byteLength(code) });
    }
    const rows: WorkflowMemoryRow[] = MEMORY_VARIANTS.map((variant) => ({
      variant,
      bundleBytes: bundles.get(variant.module)?.bytes ?? 0,
      workflows: options.workflows,
      idleMiB: [],
      loadedMiB: [],
      perWorkflowKiB: [],
    }));
    // Interleaved, so that a noisy minute of a shared machine lands on every variant alike.
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const row of rows) {
        const bundle = bundles.get(row.variant.module);
        if (!bundle) throw new Error(`no bundle for ${row.variant.module}`);
        const { idle, loaded } = await oneRun(row.variant, bundle.path, options);
        row.idleMiB.push(idle);
        row.loadedMiB.push(loaded);
        row.perWorkflowKiB.push(((loaded - idle) * 1024) / options.workflows);
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
      'per cached workflow (KiB)',
      'against the first row',
    ],
    rows.map((row) => [
      row.variant.label,
      (row.bundleBytes / 1e6).toFixed(1),
      row.workflows.toLocaleString('en'),
      spread(row.idleMiB, 0),
      spread(row.loadedMiB, 0),
      spread(row.perWorkflowKiB, 0),
      floor > 0 ? `${(median(row.perWorkflowKiB) / floor).toFixed(1)} x` : 'n/a',
    ]),
  );
}
