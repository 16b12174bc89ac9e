import { proxyActivities } from '@temporalio/workflow';
import type { createAgentJobActivities } from '../../activities/agent-job';
import type { DocsApiFailureType } from '../../activities/failure-details';

type AgentJobActivities = ReturnType<typeof createAgentJobActivities>;
type DocsApiFailureTypeName = (typeof DocsApiFailureType)[keyof typeof DocsApiFailureType];

/** Refusals (4xx, our own bad argument): retrying cannot help. The activity marks them non-retryable already. */
export const REFUSAL_FAILURE_TYPES: readonly DocsApiFailureTypeName[] = [
  'InvalidArgumentError',
  'InvalidRequestError',
  'AuthError',
  'NotFoundError',
  'ConflictError',
  'RedirectError',
];

/**
 * Create and message are not idempotent: one attempt each. The workflow re-sends only what the service cannot
 * have acted on (see failures.ts). The timeout is above the HTTP client's own (30 s for headers, 30 s for the body).
 */
export const { createAgentJob, sendAgentJobMessage } = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '75 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * Reading the job is safe to repeat: transient errors (5xx, 429 with Retry-After, network) are retried here,
 * outside the poll count. The workflow adds a schedule-to-close timeout: the time left before its deadline.
 */
export const { getAgentJob } = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // maximumAttempts unset: unlimited, bounded by the deadline.
    nonRetryableErrorTypes: [...REFUSAL_FAILURE_TYPES],
  },
});
