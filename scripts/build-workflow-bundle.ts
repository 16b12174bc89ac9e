import fs from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import {
  DEFAULT_BUNDLE_PATH,
  TRACED_BUNDLE_PATH,
  WORKFLOWS_PATH,
  WORKFLOW_BUNDLER_OPTIONS,
  WORKFLOW_INTERCEPTOR_MODULES,
} from '../src/worker';

/**
 * Prebuilds the workflow bundles so the production worker starts without webpack: the default one, and the one
 * with the tracing interceptors that a worker with OTEL_* set loads.
 */
async function main(): Promise<void> {
  await fs.mkdir(path.dirname(DEFAULT_BUNDLE_PATH), { recursive: true });
  for (const [file, workflowInterceptorModules] of [
    [DEFAULT_BUNDLE_PATH, []],
    [TRACED_BUNDLE_PATH, WORKFLOW_INTERCEPTOR_MODULES],
  ] as const) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [...workflowInterceptorModules],
      ...WORKFLOW_BUNDLER_OPTIONS,
    });
    await fs.writeFile(file, code);
    console.log(`workflow bundle written to ${path.relative(process.cwd(), file)} (${code.length} bytes)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
