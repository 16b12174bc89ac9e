import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type {
  AgentJob,
  AgentJobContinuation,
  AgentJobInput,
  AgentJobResult,
  AgentJobState,
  AlreadyCreatedBy,
} from '../../contract/agent-job';
import {
  DEFAULT_POLLING,
  FOLLOW_UP_REFUSING_STATUSES,
  STATUS_NOT_CREATED,
  STATUS_UNREAD,
  TERMINAL_JOB_STATUSES,
} from '../../contract/agent-job-constants';
import type { BudgetRefusal } from '../../contract/budget';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../continue-as-new';
import { parseDuration, type DurationInput } from '../../contract/duration';
import { AgentJobIdKey, AgentJobStatusKey, DocsProjectIdKey } from '../../contract/names';
import { clockTime, type BudgetPermits } from '../budget/permits';
import { FollowUpQueue } from './follow-ups';

/** Polling options in milliseconds. */
export interface PollingSettings {
  initialIntervalMs: number;
  maxIntervalMs: number;
  backoffCoefficient: number;
  deadlineMs: number;
}

export function resolvePolling(polling: AgentJobInput['polling']): PollingSettings {
  // Input was validated: only the fallback literal can be parsed here when the value is absent.
  const ms = (value: DurationInput | undefined, fallback: string) => parseDuration(value ?? fallback) ?? 0;
  return {
    initialIntervalMs: ms(polling?.initialInterval, DEFAULT_POLLING.initialInterval),
    maxIntervalMs: ms(polling?.maxInterval, DEFAULT_POLLING.maxInterval),
    backoffCoefficient: polling?.backoffCoefficient ?? DEFAULT_POLLING.backoffCoefficient,
    deadlineMs: ms(polling?.deadline, DEFAULT_POLLING.deadline),
  };
}

/** Everything one run knows. What crosses continue-as-new is `toContinuation`. */
export interface RunState {
  readonly input: AgentJobInput;
  readonly projectId: string;
  readonly polling: PollingSettings;
  readonly deadlineAt: number;
  readonly continuedRuns: number;
  readonly followUps: FollowUpQueue;
  jobId: string | null;
  job: AgentJob | null;
  polls: number;
  /** The running poll activity (its retries are the waits between reads), null when none runs. */
  poll: Promise<void> | null;
  pollStartedAt: number;
  /** How the poll activity ended the job's workflow (not found, refused, deadline): thrown by the loop. */
  pollFailure: Error | null;
  /** A message went out since the running poll started: its terminal answer may predate it, read once more. */
  pollAfterMessage: boolean;
  /** A follow-up was refused with 409: the job is read before the next one is sent. */
  readBeforeNextMessage: boolean;
  /** Messages sent in this run: a poll started before the latest one does not clear pollAfterMessage. */
  messagesSent: number;
  notAccepted: number;
  lastError: string | null;
  /** When the create (before the job exists) or the head follow-up may be sent again, and how often it was. */
  resendAttempt: number;
  resendAt: number;
  /** Bumped by every follow-up that arrives: it ends the loop's wait. */
  arrivals: number;
  /** Set when the run ends in failure or cancellation: new follow-ups are not accepted. */
  closingReason: string | null;
  budget: BudgetPermits | null;
  queuedForBudget: boolean;
  budgetRefusal: BudgetRefusal | undefined;
  alreadyCreatedBy: AlreadyCreatedBy | undefined;
}

export function initialState(input: AgentJobInput, now: number): RunState {
  const polling = resolvePolling(input.polling);
  const carried = input.continuation;
  return {
    input,
    projectId: input.projectId,
    polling,
    deadlineAt: carried?.deadlineAt ?? now + polling.deadlineMs,
    continuedRuns: carried?.continuedRuns ?? 0,
    followUps: new FollowUpQueue(
      carried ?? { followUps: input.earlierFollowUps ?? [], sentFollowUps: input.sentFollowUps },
    ),
    jobId: input.jobId ?? null,
    job: carried?.job ?? null,
    polls: carried?.polls ?? 0,
    poll: null,
    pollStartedAt: 0,
    pollFailure: null,
    pollAfterMessage: carried?.pollAfterMessage ?? false,
    readBeforeNextMessage: false,
    messagesSent: 0,
    notAccepted: carried?.notAcceptedFollowUps ?? 0,
    lastError: carried?.lastError ?? null,
    resendAttempt: carried?.resendAttempt ?? 0,
    resendAt: carried?.resendAt ?? 0,
    arrivals: 0,
    closingReason: null,
    budget: null,
    queuedForBudget: false,
    budgetRefusal: undefined,
    alreadyCreatedBy: carried?.alreadyCreatedBy,
  };
}

export function continueAsNewAfter(state: RunState): number {
  return state.input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.agentJob;
}

export function statusOf(state: RunState): string {
  return state.job?.status ?? STATUS_NOT_CREATED;
}

export function isTerminal(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

export function refusesFollowUps(status: string): boolean {
  return (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(status);
}

/** The job's status was read (not only its id known: attached, or named by a create answer or record). */
export function isRead(state: RunState): boolean {
  return state.job !== null && state.job.status !== STATUS_UNREAD;
}

/** The job must still be read: it is not terminal, or a message went out since the last read. */
export function needsPolling(state: RunState): boolean {
  return state.job !== null && (!isTerminal(state.job.status) || state.pollAfterMessage);
}

export function isFinished(state: RunState): boolean {
  return (
    state.job !== null && !needsPolling(state) && state.poll === null && state.followUps.pendingCount === 0
  );
}

/**
 * The workflow's view. The poll activity's reads in progress (live status, reads, last service error, next
 * attempt) are in its pending activity: the client's getAgentJobState adds them from describe().
 */
export function toAgentJobState(state: RunState): AgentJobState {
  const job = state.job;
  return {
    projectId: state.projectId,
    jobId: state.jobId,
    status: statusOf(state),
    prLink: job?.prLink ?? null,
    ...(job?.model === undefined ? {} : { model: job.model }),
    ...(job?.source === undefined ? {} : { source: job.source }),
    polls: state.polls,
    nextPollAt: null,
    pollingSince: state.poll === null ? null : iso(state.pollStartedAt),
    pendingFollowUps: state.followUps.pendingCount,
    notAcceptedFollowUps: state.notAccepted,
    followUps: state.followUps.records(),
    lastError: state.lastError,
    deadlineAt: iso(state.deadlineAt),
    polling: {
      initialInterval: state.polling.initialIntervalMs,
      maxInterval: state.polling.maxIntervalMs,
      backoffCoefficient: state.polling.backoffCoefficient,
      deadline: state.polling.deadlineMs,
    },
    continuedRuns: state.continuedRuns,
    queuedForBudget: state.queuedForBudget,
    waitingForBudgetUntil:
      state.queuedForBudget && state.budget?.waitingUntil != null ? iso(state.budget.waitingUntil) : null,
  };
}

export function toResult(state: RunState, job: AgentJob): AgentJobResult {
  const { id, ...fields } = job;
  return {
    jobId: id,
    ...fields,
    followUps: state.followUps.records(),
    polls: state.polls,
    ...(state.alreadyCreatedBy === undefined ? {} : { alreadyCreatedBy: state.alreadyCreatedBy }),
  };
}

export function toContinuation(state: RunState): AgentJobContinuation {
  return {
    deadlineAt: state.deadlineAt,
    polls: state.polls,
    job: state.job,
    // A poll cut short by continue-as-new may have missed the last message's effect.
    pollAfterMessage: state.pollAfterMessage,
    ...state.followUps.snapshot(),
    lastError: state.lastError,
    resendAt: state.resendAt,
    resendAttempt: state.resendAttempt,
    notAcceptedFollowUps: state.notAccepted,
    continuedRuns: state.continuedRuns + 1,
    ...(state.alreadyCreatedBy === undefined ? {} : { alreadyCreatedBy: state.alreadyCreatedBy }),
  };
}

/**
 * Keeps what operators see current: DocsProjectId, AgentJobId and AgentJobStatus (upserted only when they change:
 * each upsert is a history event) and the current details (no event).
 */
export function refreshVisibility(state: RunState): void {
  const current = workflowInfo().typedSearchAttributes;
  const wanted: SearchAttributeUpdatePair[] = [
    { key: DocsProjectIdKey, value: state.projectId },
    ...(state.jobId === null ? [] : [{ key: AgentJobIdKey, value: state.jobId }]),
    { key: AgentJobStatusKey, value: statusOf(state) },
  ];
  const changed = wanted.filter((pair) => current.get(pair.key) !== pair.value);
  if (changed.length > 0) upsertSearchAttributes(changed);
  const counts = state.followUps.countByStatus();
  const until = state.budget?.waitingUntil;
  setCurrentDetails(
    [
      `**Status:** ${statusOf(state)} · **Job:** ${state.jobId ?? 'not created yet'} · **Project:** ${state.projectId}`,
      `**Polls:** ${state.polls} · **Deadline:** ${iso(state.deadlineAt)}` +
        (state.poll === null
          ? ''
          : ' · reading in the pending activity pollAgentJob (its last failure, next attempt)'),
      `**Follow-ups:** ${counts.pending} pending, ${counts.delivered} delivered, ${counts.rejected} rejected, ${counts.outcome_unknown} outcome unknown`,
      state.queuedForBudget
        ? `**Queued for budget** (the project's creates and messages, in order)${until == null ? '' : ` until about ${clockTime(until)}`}`
        : '',
      state.job?.prLink ? `**Pull request:** ${state.job.prLink}` : '',
      state.lastError ? `**Last error:** ${state.lastError}` : '',
      state.continuedRuns > 0 ? `**Run:** ${state.continuedRuns + 1} (continued as new)` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
}

export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
