import { z } from 'zod';
import type { DurationInput } from './duration';
import { durationSchema, promptSchema, projectIdSchema } from './validation';

/** The job as the documentation service describes it (section 2.1 of its interface). */
export interface AgentJob {
  id: string;
  /** `active`, `completed`, `archived`, `failed`, or a value the interface does not list yet. */
  status: string;
  prLink: string | null;
  model?: string;
  source?: { repository?: string; ref?: string };
  createdAt?: string;
  archivedAt?: string | null;
}

export const TERMINAL_JOB_STATUSES = ['completed', 'archived', 'failed'] as const;
export const KNOWN_JOB_STATUSES = ['active', ...TERMINAL_JOB_STATUSES] as const;

export interface PollingOptions {
  initialInterval?: DurationInput;
  maxInterval?: DurationInput;
  backoffCoefficient?: number;
  /** How long the workflow waits for a terminal status before failing with a timeout. */
  deadline?: DurationInput;
}

export interface AgentJobInput {
  projectId: string;
  prompt: string;
  polling?: PollingOptions;
}

export const pollingOptionsSchema = z
  .object({
    initialInterval: durationSchema.optional(),
    maxInterval: durationSchema.optional(),
    backoffCoefficient: z
      .number({ error: 'must be a number' })
      .min(1, 'must be at least 1')
      .max(10, 'must be at most 10')
      .optional(),
    deadline: durationSchema.optional(),
  })
  .strict();

export const agentJobInputSchema = z
  .object({
    projectId: projectIdSchema,
    prompt: promptSchema,
    polling: pollingOptionsSchema.optional(),
  })
  .strict();

export interface FollowUpRequest {
  prompt: string;
  /** Deduplication key: a follow-up is delivered to the service at most once per messageId. */
  messageId?: string;
}

export const followUpRequestSchema = z
  .object({
    prompt: promptSchema,
    messageId: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .optional(),
  })
  .strict();

/** pending: queued in the workflow; delivered: the service accepted it; rejected: the service refused it (4xx);
 * outcome_unknown: the request may or may not have reached the service (never silently re-sent). */
export type FollowUpStatus = 'pending' | 'delivered' | 'rejected' | 'outcome_unknown';

export interface FollowUpRecord {
  messageId: string;
  prompt: string;
  status: FollowUpStatus;
  /** Why a follow-up was rejected or its outcome is unknown. */
  error?: string;
}

export interface AgentJobResult {
  jobId: string;
  status: string;
  prLink: string | null;
  model?: string;
  source?: { repository?: string; ref?: string };
  createdAt?: string;
  archivedAt?: string | null;
  followUps: FollowUpRecord[];
  polls: number;
}

export interface AgentJobState {
  jobId: string | null;
  status: string;
  prLink: string | null;
  polls: number;
  /** ISO 8601 time of the next poll, or null when not waiting. */
  nextPollAt: string | null;
  pendingFollowUps: number;
  followUps: FollowUpRecord[];
  lastError: string | null;
}

/** ApplicationFailure types the agentJob workflow fails with; details[0] carries the data. */
export const AgentJobFailureType = {
  jobFailed: 'AgentJobFailed',
  timedOut: 'AgentJobTimedOut',
  createOutcomeUnknown: 'AgentJobCreateOutcomeUnknown',
  invalidInput: 'InvalidInput',
} as const;
