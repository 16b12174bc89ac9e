import { AsyncLocalStorage } from 'node:async_hooks';

// The workflow sandbox provides AsyncLocalStorage as a global, and @temporalio/workflow (1.24) reads it when its
// cancellation-scope module loads: set it first (imported before that module by workflow-context.ts).
if (require.cache[require.resolve('@temporalio/workflow/lib/cancellation-scope')]) {
  throw new Error('import test/helpers/workflow-context before anything that loads @temporalio/workflow');
}
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage = AsyncLocalStorage;
