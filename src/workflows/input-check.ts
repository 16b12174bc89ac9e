import { proxyLocalActivities } from '@temporalio/workflow';
import type { createInputCheckActivities, InvalidInput, WorkflowInputCheck } from '../activities';

const { checkWorkflowInput } = proxyLocalActivities<ReturnType<typeof createInputCheckActivities>>({
  startToCloseTimeout: '10 seconds',
});

/**
 * The workflow's input checked against the contract's zod schema in a local activity, outside the sandbox
 * (zod evaluated in the sandbox costs about 1 MiB per cached workflow). Null when the input is valid.
 */
export async function invalidInputOf(
  workflow: WorkflowInputCheck['workflow'],
  input: unknown,
): Promise<InvalidInput | null> {
  return checkWorkflowInput({ workflow, input });
}
