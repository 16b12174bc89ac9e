import type {
  AgentJob,
  AgentJobContinuation,
  AgentJobInput,
  AgentJobResult,
  AgentJobState,
  AlreadyCreatedBy,
} from '../../contract/agent-job';
import {
  FOLLOW_UP_REFUSING_STATUSES,
  KNOWN_JOB_STATUSES,
  STATUS_NOT_CREATED,
  STATUS_UNREAD,
  TERMINAL_JOB_STATUSES,
} from '../../contract/agent-job-constants';
import type { BudgetRefusal } from '../../contract/budget';
import { CONTINUE_AS_NEW_AFTER_EVENTS } from '../../contract/continue-as-new';
import type { BudgetPermits } from '../budget/permits';
import { resolvePolling, type PollingSettings } from '../../contract/poll-schedule';
import { FollowUpQueue, type FollowUpQueueSnapshot } from './follow-ups';

/** Everything one run of the workflow knows. What crosses continue-as-new is `toContinuation`. */
export interface RunState {
  readonly input: AgentJobInput;
  readonly projectId: string;
  readonly polling: PollingSettings;
  readonly continueAsNewAfterEvents: number;
  readonly deadlineAt: number;
  readonly continuedRuns: number;
  readonly followUps: FollowUpQueue;
  jobId: string | null;
  job: AgentJob | null;
  polls: number;
  backoffStep: number;
  nextPollAt: number | null;
  /** When the running poll activity started (it owns the waits between polls); null when none runs. */
  pollingSince: number | null;
  /** A follow-up was refused with 409: the job is read once before the next one is sent. */
  readBeforeNextMessage: boolean;
  /** Follow-ups not accepted into the queue in this run (invalid, queue full, job ending): also a metric. */
  notAccepted: number;
  pollAfterMessage: boolean;
  lastError: string | null;
  /** Re-send bookkeeping for the create (before the job exists) or the follow-up at the head of the queue. */
  resendAttempt: number;
  resendAt: number;
  /** Bumped by every follow-up that arrives: it ends the wait between polls early. */
  arrivals: number;
  /** Set when the run ends in failure or cancellation: new follow-ups are not accepted. */
  closingReason: string | null;
  /** The project's create-and-message budget (absent in runs recorded before budgets). */
  budget: BudgetPermits | null;
  /** A create or message waits for a permit. */
  queuedForBudget: boolean;
  /** The last create or message was refused with 429: reported with the next permit request. */
  budgetRefusal: BudgetRefusal | undefined;
  /** This run created nothing: an earlier run of its workflow id created the job, with the same prompt. */
  alreadyCreatedBy: AlreadyCreatedBy | undefined;
}

export function initialState(input: AgentJobInput, now: number): RunState {
  const polling = resolvePolling(input.polling);
  const carried = input.continuation;
  return {
    input,
    projectId: input.projectId,
    polling,
    continueAsNewAfterEvents: input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS.agentJob,
    deadlineAt: carried?.deadlineAt ?? now + polling.deadlineMs,
    continuedRuns: carried?.continuedRuns ?? 0,
    followUps: new FollowUpQueue(carried ?? earlierRuns(input)),
    jobId: input.jobId ?? null,
    job: carried?.job ?? null,
    polls: carried?.polls ?? 0,
    backoffStep: carried?.backoffStep ?? 0,
    nextPollAt: carried?.nextPollAt ?? null,
    pollingSince: null,
    readBeforeNextMessage: carried?.readBeforeNextMessage ?? false,
    notAccepted: carried?.notAcceptedFollowUps ?? 0,
    pollAfterMessage: carried?.pollAfterMessage ?? false,
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

export { STATUS_UNREAD };

export function statusOf(state: RunState): string {
  return state.job?.status ?? STATUS_NOT_CREATED;
}

export function isTerminal(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

export function isKnownStatus(status: string): boolean {
  return (KNOWN_JOB_STATUSES as readonly string[]).includes(status);
}

export function refusesFollowUps(status: string): boolean {
  return (FOLLOW_UP_REFUSING_STATUSES as readonly string[]).includes(status);
}

/** The job must still be read: it is not terminal, or a follow-up was accepted since the last read. */
export function needsPolling(state: RunState): boolean {
  return state.job !== null && (!isTerminal(state.job.status) || state.pollAfterMessage);
}

export function isFinished(state: RunState): boolean {
  return state.job !== null && !needsPolling(state) && state.followUps.pendingCount === 0;
}

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
    nextPollAt: needsPolling(state) && state.nextPollAt !== null ? iso(state.nextPollAt) : null,
    pollingSince: state.pollingSince === null ? null : iso(state.pollingSince),
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

/** The contract's result; only called once the job exists. */
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
    backoffStep: state.backoffStep,
    nextPollAt: state.nextPollAt,
    job: state.job,
    pollAfterMessage: state.pollAfterMessage,
    ...state.followUps.snapshot(),
    lastError: state.lastError,
    resendAt: state.resendAt,
    resendAttempt: state.resendAttempt,
    readBeforeNextMessage: state.readBeforeNextMessage,
    notAcceptedFollowUps: state.notAccepted,
    continuedRuns: state.continuedRuns + 1,
    ...(state.alreadyCreatedBy === undefined ? {} : { alreadyCreatedBy: state.alreadyCreatedBy }),
  };
}

/** A new run for a job that earlier runs followed up: what they sent (none is sent twice) and settled. */
function earlierRuns(input: AgentJobInput): FollowUpQueueSnapshot {
  return {
    followUps: input.earlierFollowUps ?? [],
    pendingFollowUps: [],
    omittedFollowUps: 0,
    unnamedFollowUps: 0,
    sentFollowUps: input.sentFollowUps,
  };
}

export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
