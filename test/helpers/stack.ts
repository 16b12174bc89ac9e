import { after, before } from 'node:test';
import {
  startProcessStack,
  startStack,
  type ProcessStack,
  type ProcessStackOptions,
  type Stack,
  type TestStackOptions,
} from '../../dev/stack';
import type { TestWorker } from '../../dev/worker';

interface UseStackOptions {
  /** Runs after the stack stopped (or failed to start): closes what the worker options created. */
  afterStop?: () => Promise<void> | void;
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
export function useProcessStack(options: ProcessStackOptions & UseStackOptions): ProcessStack {
  return useStarted(options, () => startProcessStack(options));
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
