import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  followUpRecordSchema,
  type AgentJobFailureTypeName,
  type FollowUpFailureTypeName,
} from '../contract/agent-job';
import { FollowUpNotAcceptedError } from '../contract/errors';

/**
 * What a failed agentJob's details[0] tells, read leniently: the AgentJobResult (AgentJobFailed), the
 * AgentJobState (the others) or `{ issues }` (InvalidInput). A part missing or odd reads as absent.
 */
const failureDetailsSchema = z.object({
  /** The service job, when one was created. */
  jobId: z.string().nullable().optional().catch(undefined),
  /** The job's last status seen. */
  status: z.string().optional().catch(undefined),
  prLink: z.string().nullable().optional().catch(undefined),
  polls: z.number().optional().catch(undefined),
  /** The follow-ups and what became of each. */
  followUps: z.array(followUpRecordSchema).catch([]),
  /** For InvalidInput: each field and the rule it breaks. */
  issues: z
    .array(z.object({ field: z.string(), rule: z.string() }))
    .optional()
    .catch(undefined),
});

export type AgentJobFailureInfo = z.infer<typeof failureDetailsSchema> & {
  /** An AgentJobFailureType value, e.g. AgentJobFailed or AgentJobTimedOut. */
  type: AgentJobFailureTypeName | (string & {});
  message: string;
  /** details[0] as the workflow sent it: AgentJobResult for AgentJobFailed, AgentJobState for the others. */
  details: unknown;
};

/** The typed failure inside a WorkflowFailedError from awaitAgentJob, or undefined for any other error. */
export function agentJobFailureOf(error: unknown): AgentJobFailureInfo | undefined {
  if (!(error instanceof WorkflowFailedError) || !(error.cause instanceof ApplicationFailure))
    return undefined;
  const failure = error.cause;
  const details: unknown = failure.details?.[0];
  const parsed = failureDetailsSchema.safeParse(details ?? {});
  return {
    type: failure.type ?? 'Error',
    message: failure.message,
    details,
    ...(parsed.success ? parsed.data : { followUps: [] }),
  };
}

export interface FollowUpFailureInfo {
  /** A FollowUpFailureType value: FollowUpNotAccepted, InvalidInput, FollowUpRejected, FollowUpOutcomeUnknown... */
  type: FollowUpFailureTypeName | (string & {});
  message: string;
}

/**
 * Why a follow-up sent with `sendFollowUpAndWait` (or `sendFollowUp`, `followUpAnyState`) failed: the workflow's
 * or the service's refusal (a WorkflowUpdateFailedError), or the client's FollowUpNotAcceptedError. Undefined
 * for any other error (Temporal unreachable, an unknown workflow id).
 */
export function followUpFailureOf(error: unknown): FollowUpFailureInfo | undefined {
  if (error instanceof FollowUpNotAcceptedError) return { type: error.name, message: error.message };
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    return { type: error.cause.type ?? 'Error', message: error.cause.message };
  }
  return undefined;
}
