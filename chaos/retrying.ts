import { WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { AgentJobResetRefusedError } from '../src/client/agent-job-runs';
import { FollowUpNotAcceptedError } from '../src/contract/errors';
import { InputValidationError } from '../src/contract/validation';

/** Answers that are the outcome itself; anything else (Temporal unreachable during a restart) is tried again. */
function isFinal(error: unknown): boolean {
  return (
    error instanceof WorkflowFailedError ||
    error instanceof WorkflowUpdateFailedError ||
    error instanceof WorkflowNotFoundError ||
    error instanceof FollowUpNotAcceptedError ||
    error instanceof AgentJobResetRefusedError ||
    error instanceof InputValidationError ||
    closedBeforeFirstTask(error)
  );
}

/** A query of a run closed before its first workflow task: it has no state, however often it is asked. */
export function closedBeforeFirstTask(error: unknown): boolean {
  return error instanceof Error && error.message.includes('closed before WorkflowTaskStarted');
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A client call made the way a careful caller makes it across a Temporal server restart: tried again every
 * second until `deadline`. Only calls that are idempotent (start with a fixed id, update with an id, queries)
 * or deduplicated by the workflow (follow-up signals carry a messageId) are wrapped.
 */
export async function retrying<T>(call: () => Promise<T>, deadline: number): Promise<T> {
  for (;;) {
    try {
      return await beforeDeadline(call(), deadline);
    } catch (error) {
      if (isFinal(error) || Date.now() > deadline) throw error;
      await sleep(1000);
    }
  }
}

/**
 * A workflow's result long-polls for as long as it runs: the campaign's deadline bounds every wait, with 30 s of
 * grace for the reads made once it passed.
 */
async function beforeDeadline<T>(pending: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('no answer by the campaign deadline (the workflow still open?)')),
      Math.max(30_000, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([pending, passed]);
  } finally {
    clearTimeout(timer);
  }
}
