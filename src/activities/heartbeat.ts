import { Context } from '@temporalio/activity';

/**
 * Heartbeats every `everyMs` while `work` runs, so that a worker that dies mid-call is noticed after the
 * activity's heartbeatTimeout instead of its whole startToCloseTimeout.
 */
export async function whileHeartbeating<T>(work: () => Promise<T>, everyMs = 5000): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
