import './sandbox-globals';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RootCancellationScope } from '@temporalio/workflow/lib/cancellation-scope';

/**
 * Just enough of a workflow context for unit tests of workflow helpers that use `condition`, `CancellationScope`
 * (as PageWindow does) and signal handlers (as BudgetPermits does), without a server or a sandbox. Import it before anything that loads
 * `@temporalio/workflow`. The activator stand-in holds what `condition` and `CancellationScope` read in SDK 1.24;
 * `settle` plays the part of the worker's activations, re-checking blocked conditions until nothing changes.
 * Whole workflows are still tested on a real dev server (test/workflows/).
 */
interface BlockedCondition {
  fn(): boolean;
  resolve(): void;
}

interface ActivatorStandIn {
  rootScope: unknown;
  nextSeqs: { condition: number };
  blockedConditions: Map<number, BlockedCondition>;
  hasFlag(): boolean;
  /** What `setHandler` fills for a signal (SDK 1.24); `signal()` below delivers to it. */
  signalHandlers: Map<string, { handler: (...args: unknown[]) => unknown }>;
  dispatchBufferedSignals(): void;
}

const activator: ActivatorStandIn = {
  rootScope: new RootCancellationScope(),
  nextSeqs: { condition: 0 },
  blockedConditions: new Map(),
  hasFlag: () => true,
  signalHandlers: new Map(),
  dispatchBufferedSignals: () => undefined,
};
(globalThis as { __TEMPORAL_ACTIVATOR__?: ActivatorStandIn }).__TEMPORAL_ACTIVATOR__ = activator;

/** Lets pending promises run and resolves the conditions that became true, until neither makes progress. */
export async function settle(): Promise<void> {
  for (;;) {
    await nextTurn();
    let resolved = false;
    for (const [seq, condition] of activator.blockedConditions) {
      if (condition.fn()) {
        activator.blockedConditions.delete(seq);
        condition.resolve();
        resolved = true;
      }
    }
    if (!resolved) return;
  }
}

/** Delivers a signal to the handler the code under test registered with `setHandler`, as an activation would. */
export function signal(name: string, ...args: unknown[]): void {
  const registered = activator.signalHandlers.get(name);
  if (!registered) throw new Error(`no handler for signal ${name}`);
  registered.handler(...args);
}
