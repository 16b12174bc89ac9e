import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { AgentJobActivityFailureType, TERMINAL_JOB_STATUSES, type AgentJob } from '../contract/agent-job';
import type { DocsApiClient } from '../docs-api/client';
import { pollDelayMs, pollJitterKey, type PollingSettings } from '../contract/poll-schedule';
import { toApplicationFailure, type FailureMappingOptions } from './failures';

export interface PollUntilTerminalInput {
  projectId: string;
  jobId: string;
  polling: Omit<PollingSettings, 'deadlineMs'>;
  /** The poll number of this activity's first read (polls the workflow counted before, plus one). */
  firstPoll: number;
  /** The backoff step of the wait that preceded the first read: after read k the wait is step firstStep + k. */
  firstStep: number;
  /** The status the workflow last saw: a read that finds another one returns, so the workflow can show it. */
  knownStatus: string;
}

export interface PolledJob {
  job: AgentJob;
  /** Reads the service answered, over every attempt of this activity (transient errors are not polls). */
  polls: number;
  /**
   * Fields the service sent with an unexpected type, dropped from its answers (each logged when read), over every
   * read of this activity, each once; only when there were some.
   */
  responseWarnings?: string[];
}

/** Carried from attempt to attempt in the heartbeat details: reads answered by the service so far. */
interface PollProgress {
  polls: number;
  /** The distinct warnings of those reads (a handful at most: one per documented field). */
  warnings?: string[];
}

/**
 * Temporal's infrequent-polling pattern: one attempt reads the job once. A terminal status, or a status other than
 * the one the workflow knows (so that getState and AgentJobStatus follow it), returns the job; the same running
 * status (also one this worker does not know) throws a benign, retryable failure whose nextRetryDelay is the
 * next poll interval, so the wait lives in the server's retry timer: no workflow task, no history event.
 * A transient error waits for its Retry-After, or the same interval.
 */
export async function pollUntilTerminal(
  docsApi: DocsApiClient,
  mapping: FailureMappingOptions,
  input: PollUntilTerminalInput,
): Promise<PolledJob> {
  const context = Context.current();
  const { polls: previous, warnings = [] } = progressOf(context.info.heartbeatDetails);
  const settings = { ...input.polling, deadlineMs: 0 };
  const workflowId = context.info.workflowExecution?.workflowId ?? input.jobId;
  const pollNumber = input.firstPoll + previous;
  /** The wait after this read: the step grows with each read, the jitter key names the next poll. */
  const delayAfter = (reads: number) =>
    pollDelayMs(settings, input.firstStep + reads, pollJitterKey(workflowId, input.firstPoll + reads));
  const dropped: string[] = [];
  let job: AgentJob;
  try {
    job = await docsApi.getJob(input.projectId, input.jobId, {
      signal: context.cancellationSignal,
      onWarning: (warning) => dropped.push(warning),
    });
  } catch (error) {
    throw withRetryDelay(toApplicationFailure(error, mapping), delayAfter(Math.max(1, previous)));
  }
  if (dropped.length > 0) {
    context.log.warn('The service answered fields of an unexpected type: they were dropped', {
      jobId: input.jobId,
      projectId: input.projectId,
      poll: pollNumber,
      warnings: dropped,
    });
    for (const warning of dropped) if (!warnings.includes(warning)) warnings.push(warning);
  }
  const polls = previous + 1;
  const terminal = (TERMINAL_JOB_STATUSES as readonly string[]).includes(job.status);
  if (terminal || job.status !== input.knownStatus) {
    return warnings.length === 0 ? { job, polls } : { job, polls, responseWarnings: warnings };
  }
  context.heartbeat((warnings.length === 0 ? { polls } : { polls, warnings }) satisfies PollProgress);
  throw ApplicationFailure.create({
    type: AgentJobActivityFailureType.stillRunning,
    message: `job ${input.jobId} is ${job.status} (poll ${pollNumber})`,
    category: ApplicationFailureCategory.BENIGN,
    nextRetryDelay: delayAfter(polls),
    details: [{ status: job.status, polls }],
  });
}

/** What earlier attempts carried; anything else in the details (an older worker's) counts as nothing. */
function progressOf(details: unknown): PollProgress {
  const progress = details as Partial<PollProgress> | undefined;
  const polls = progress?.polls;
  const warnings = progress?.warnings;
  return {
    polls: typeof polls === 'number' && Number.isInteger(polls) && polls >= 0 ? polls : 0,
    warnings: Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === 'string') : [],
  };
}

/** A retryable failure without Retry-After waits the poll interval, not the retry policy's own backoff. */
function withRetryDelay(failure: unknown, delayMs: number): unknown {
  if (!(failure instanceof ApplicationFailure) || failure.nonRetryable || failure.nextRetryDelay != null) {
    return failure;
  }
  return ApplicationFailure.create({
    message: failure.message,
    ...(failure.type == null ? {} : { type: failure.type }),
    details: failure.details ? [...failure.details] : [],
    nextRetryDelay: delayMs,
  });
}
