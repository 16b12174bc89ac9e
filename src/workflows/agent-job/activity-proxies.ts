import { ActivityCancellationType, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { createAgentJobActivities } from '../../activities/agent-job';
import { REJECTION_FAILURE_TYPES } from '../../contract/failure-types';

type AgentJobActivities = ReturnType<typeof createAgentJobActivities>;

/**
 * Task priority (lower key first; the server's default range is 1-5, unset is 3): a create or a follow-up is
 * dispatched ahead of any poll waiting on the same task queue, so follow-ups never queue behind polls.
 */
export const CALL_PRIORITY = { priorityKey: 1 } as const;
export const POLL_PRIORITY = { priorityKey: 5 } as const;

/**
 * Create and message are not idempotent: one attempt each. The workflow re-sends only what the service cannot
 * have acted on (see call-failures.ts). The timeout is above the HTTP client's own (30 s for headers, 30 s for the body).
 * The workflow runs them in a non-cancellable scope (job-calls.ts): the request may already be at the service, so
 * its answer is always recorded, whatever happens to the workflow.
 */
export const { createAgentJob, sendAgentJobMessage } = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '75 seconds',
  retry: { maximumAttempts: 1 },
  priority: CALL_PRIORITY,
});

/** Idempotent (a record's first write stays): retried for a minute, then given up (logged) by the workflow. */
export const { recordCreate } = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '1 minute',
});

/**
 * Polling as one activity (Temporal's infrequent-polling pattern, see activities/poll-agent-job.ts): each attempt
 * reads the job once and fails with a benign "still running" whose nextRetryDelay is the next poll interval, so
 * the waits between polls make no workflow task and no history event. Unlimited attempts, bounded by the
 * workflow's schedule-to-close timeout (the deadline). TRY_CANCEL: a follow-up does not wait for a read in flight.
 */
export const POLL_RETRY = {
  // Used only when an attempt fails without nextRetryDelay (an unexpected error): the activity sets it otherwise.
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: 120_000,
  nonRetryableErrorTypes: [...REJECTION_FAILURE_TYPES],
} as const satisfies RetryPolicy;

export const { pollAgentJob } = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: POLL_RETRY,
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  priority: POLL_PRIORITY,
});
