import fs from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { DEFAULT_BUNDLE_PATH, WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES } from '../src/worker';

/** Prebuilds the workflow bundle so the production worker starts without webpack. */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
  });
  await fs.mkdir(path.dirname(DEFAULT_BUNDLE_PATH), { recursive: true });
  await fs.writeFile(DEFAULT_BUNDLE_PATH, code);
  console.log(
    `workflow bundle written to ${path.relative(process.cwd(), DEFAULT_BUNDLE_PATH)} (${code.length} bytes)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
