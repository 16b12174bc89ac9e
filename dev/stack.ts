import { tracingRequested } from '../src/tracing/setup';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSimulator, type Simulator, type SimulatorOptions } from './simulator';
import { startTemporal, type DevServerOptions } from './temporal';
import { startTestWorker, type TestWorker, type TestWorkerOptions } from './worker';
import { startWorkerProcess, type WorkerProcess } from './worker-process';
import { workflowBundlePath } from './workflow-bundle';

/** The real parts a test or benchmark runs against: a dev server, the simulator, a worker and an export directory. */
export interface Stack<W> {
  env: TestWorkflowEnvironment;
  client: Client;
  sim: Simulator;
  worker: W;
  exportDir: string;
  /** Stops the worker first (so no task runs against a closed simulator), then the rest; removes exportDir. */
  stop(): Promise<void>;
}

/** The stack most tests use: the worker in this process. */
export type TestStack = Stack<TestWorker>;

interface StackParts {
  /** Names the temporary export directory, to tell leftovers apart. */
  name: string;
  temporal?: DevServerOptions;
  simulator?: SimulatorOptions;
}

export interface TestStackOptions extends StackParts {
  /** Worker options beyond the service and export directory; may use the started simulator. */
  worker?: (sim: Simulator) => Omit<TestWorkerOptions, 'service' | 'exportDir'>;
}

export interface ProcessStackOptions extends StackParts {
  /** Environment of the worker process beyond the connection, the service and EXPORT_DIR. */
  workerEnv?: Record<string, string>;
  /** Worker processes on the one task queue (default 1), each started the same way. */
  workers?: number;
}

/** A stack of worker processes: `worker` is the first of `workers`. */
export interface ProcessStack extends Stack<WorkerProcess> {
  workers: WorkerProcess[];
}

/** The worker runs in this process (tests that pass fakes or tuning to `createActivities` and `createWorker`). */
export function startStack(options: TestStackOptions): Promise<Stack<TestWorker>> {
  return startWith(options, async ({ env, sim, exportDir }) => {
    const worker = await startTestWorker(env, { service: sim, exportDir, ...options.worker?.(sim) });
    return { worker, stopWorker: () => worker.stop() };
  });
}

/** The production entry point runs as its own process, so its RSS, CPU and signals are its own. */
export async function startProcessStack(options: ProcessStackOptions): Promise<ProcessStack> {
  let workers: WorkerProcess[] = [];
  const stack = await startWith(options, async ({ env, sim, exportDir }) => {
    // A prebuilt bundle, as production loads it, unless the caller's workerEnv chose another (or 'off').
    const bundleEnv =
      options.workerEnv?.WORKER_WORKFLOW_BUNDLE === undefined
        ? {
            WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({
              traced: tracingRequested(options.workerEnv ?? {}),
            }),
          }
        : {};
    workers = Array.from({ length: Math.max(1, options.workers ?? 1) }, () =>
      startWorkerProcess({
        temporalAddress: env.address,
        service: sim,
        exportDir,
        env: { ...bundleEnv, ...options.workerEnv },
      }),
    );
    // Every process is stopped, even when another one's stop (or start) fails; the first failure is reported.
    const stopWorkers = async (): Promise<void> => {
      const stopped = await Promise.allSettled(workers.map((worker) => worker.kill('SIGTERM')));
      const failed = stopped.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    };
    try {
      await Promise.all(workers.map((worker) => worker.ready));
    } catch (error) {
      await stopWorkers().catch(() => undefined);
      throw error;
    }
    const [first] = workers;
    if (!first) throw new Error('a process stack has at least one worker');
    return { worker: first, stopWorker: stopWorkers };
  });
  return { ...stack, workers };
}

interface Started {
  env: TestWorkflowEnvironment;
  sim: Simulator;
  exportDir: string;
}

async function startWith<W>(
  options: StackParts,
  startWorker: (parts: Started) => Promise<{ worker: W; stopWorker: () => Promise<void> }>,
): Promise<Stack<W>> {
  const results = await Promise.allSettled([
    startTemporal(options.temporal),
    startSimulator(options.simulator),
    fs.mkdtemp(path.join(os.tmpdir(), `${options.name}-`)),
  ] as const);
  const [envResult, simResult, dirResult] = results;
  const stopParts = async (): Promise<void> => {
    await Promise.allSettled([
      envResult.status === 'fulfilled' ? envResult.value.teardown() : undefined,
      simResult.status === 'fulfilled' ? simResult.value.close() : undefined,
    ]);
    if (dirResult.status === 'fulfilled') await fs.rm(dirResult.value, { recursive: true, force: true });
  };
  if (envResult.status === 'rejected' || simResult.status === 'rejected' || dirResult.status === 'rejected') {
    await stopParts();
    throw results.find((r) => r.status === 'rejected')?.reason;
  }
  const parts = { env: envResult.value, sim: simResult.value, exportDir: dirResult.value };
  let started: { worker: W; stopWorker: () => Promise<void> };
  try {
    started = await startWorker(parts);
  } catch (error) {
    await stopParts();
    throw error;
  }
  return {
    ...parts,
    client: parts.env.client,
    worker: started.worker,
    async stop() {
      // The server and simulator stop even when the worker's stop fails; that failure is still reported.
      try {
        await started.stopWorker();
      } finally {
        await stopParts();
      }
    },
  };
}

export function workerPid(stack: Stack<WorkerProcess>): number {
  const pid = stack.worker.child.pid;
  if (pid === undefined) throw new Error('the worker process has no pid');
  return pid;
}
