import { after, before } from 'node:test';
import {
  startProcessStack,
  startStack,
  type ProcessStackOptions,
  type Stack,
  type TestStackOptions,
} from '../../dev/stack';
import type { TestWorker } from '../../dev/worker';
import { startWorkerProcess, type WorkerProcess } from '../../dev/worker-process';

interface UseStackOptions {
  /** Runs after the stack stopped (or failed to start): closes what the worker options created. */
  afterStop?: () => Promise<void> | void;
}

interface ProcessWorkersOptions {
  /** Worker processes in all, on the one task queue (default 1): the others start like the stack's own. */
  workers?: number;
}

/** A process stack with all its worker processes. */
export interface ProcessStack extends Stack<WorkerProcess> {
  /** Every worker process, the stack's own (`worker`) first. */
  workers: WorkerProcess[];
}

/**
 * The test file's stack (dev server, simulator, in-process worker, export directory): started before the file's
 * first test, stopped after its last. Call it at the top level of the file; read the stack's parts inside tests
 * and hooks (node 20 runs a file's top-level `before` hooks concurrently, so another hook cannot rely on it).
 * A part that fails to start is not leaked: startStack stops the parts that did start.
 */
export function useStack(options: TestStackOptions & UseStackOptions): Stack<TestWorker> {
  return useStarted(options, () => startStack(options));
}

/** The same with the production worker as its own process (tests that kill or signal it), or several. */
export function useProcessStack(
  options: ProcessStackOptions & ProcessWorkersOptions & UseStackOptions,
): ProcessStack {
  return useStarted(options, () => startProcessWorkers(options));
}

/** The other workers start once the stack has; if one fails to, they are killed and the stack is stopped. */
async function startProcessWorkers(
  options: ProcessStackOptions & ProcessWorkersOptions,
): Promise<ProcessStack> {
  const stack = await startProcessStack(options);
  const others: WorkerProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(others.map((worker) => worker.kill('SIGTERM')));
    await stack.stop();
  };
  try {
    while (others.length < (options.workers ?? 1) - 1) {
      others.push(
        startWorkerProcess({
          temporalAddress: stack.env.address,
          service: stack.sim,
          exportDir: stack.exportDir,
          env: options.workerEnv ?? {},
        }),
      );
    }
    await Promise.all(others.map((worker) => worker.ready));
  } catch (error) {
    await stop();
    throw error;
  }
  return { ...stack, workers: [stack.worker, ...others], stop };
}

function useStarted<S extends Stack<unknown>>(
  { name, afterStop }: { name: string } & UseStackOptions,
  start: () => Promise<S>,
): S {
  let stack: S | undefined;
  before(async () => {
    stack = await start();
  });
  after(async () => {
    const running = stack;
    stack = undefined;
    try {
      await running?.stop();
    } finally {
      await afterStop?.();
    }
  });
  return new Proxy({} as S, {
    get(_target, key) {
      if (!stack) {
        throw new Error(
          `the ${name} stack is not running: read it inside a test or hook (or it failed to start)`,
        );
      }
      return Reflect.get(stack, key) as unknown;
    },
  });
}
