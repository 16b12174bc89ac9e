import { workflowInfo } from '@temporalio/workflow';

/**
 * The history length (events) at which each workflow continues as new, unless the server suggested it earlier
 * (`continueAsNewSuggested`, at 4,096 events by default). A workflow's `continueAsNewAfterEvents` input overrides
 * its default (tests lower it). All far below Temporal's 50,000-event and 50 MB limits.
 */
export const CONTINUE_AS_NEW_AFTER_EVENTS = {
  /** agentJob: polls are retries of one activity and write no events; only long follow-up conversations grow it. */
  agentJob: 5_000,
  /** visitorsExport: a run of pages (one activity) costs about 6 events, so about 150 of them per run. */
  visitorsExport: 1_000,
  /** The budget limiter: a grant costs about 7 events (the ask, the grant signalled out, a task), so about 140 per run. */
  budgetLimiter: 1_000,
} as const;

/** History bytes at which any run continues as new: small payloads keep this far from the event limit. */
const CONTINUE_AS_NEW_AFTER_BYTES = 1024 * 1024;

/** Whether the current run should continue as new now: the server suggests it, or its history reached a limit. */
export function continueAsNewDue(eventLimit: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength >= eventLimit ||
    info.historySize >= CONTINUE_AS_NEW_AFTER_BYTES
  );
}
