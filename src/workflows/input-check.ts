import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { createInputCheckActivities, InvalidInput, WorkflowInputCheck } from '../activities/input-check';

/** Runs that started before this patch (replayed histories) checked their input with zod in the sandbox. */
export const INPUT_CHECK_PATCH = 'input-checked-outside-sandbox';

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
  /** A newer patch of the workflow implies this one: its runs write one marker, not two. */
  impliedByNewerPatch = false,
): Promise<InvalidInput | null> {
  if (!impliedByNewerPatch && !patched(INPUT_CHECK_PATCH)) return null;
  return checkWorkflowInput({ workflow, input });
}
