import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type {
  AgentJob,
  AgentJobContinuation,
  AgentJobInput,
  AgentJobResult,
  AgentJobState,
  EarlierFollowUps,
  FollowUpRecord,
  FollowUpStatus,
  PendingFollowUp,
  SentFollowUps,
} from '../../contract/agent-job';
import {
  DEFAULT_POLLING,
  FOLLOW_UP_LIMITS,
  STATUS_NOT_CREATED,
  STATUS_UNREAD,
  SentFollowUpLedger,
  isTerminal,
} from '../../contract/agent-job-constants';
import type { BudgetRefusal } from '../../contract/budget';
import { parseDuration, type DurationInput } from '../../contract/duration';
import { AgentJobIdKey, AgentJobStatusKey, DocsProjectIdKey } from '../../contract/names';
import { truncate } from '../../contract/failure-types';
import { clockTime, type BudgetPermits } from '../budget/permits';

/** Polling options in milliseconds, named as getState shows them. */
export type PollingSettings = ReturnType<typeof resolvePolling>;

export function resolvePolling(polling: AgentJobInput['polling']) {
  // Input was validated: only the fallback literal can be parsed here when the value is absent.
  const ms = (value: DurationInput | undefined, fallback: string) => parseDuration(value ?? fallback) ?? 0;
  return {
    initialInterval: ms(polling?.initialInterval, DEFAULT_POLLING.initialInterval),
    maxInterval: ms(polling?.maxInterval, DEFAULT_POLLING.maxInterval),
    backoffCoefficient: polling?.backoffCoefficient ?? DEFAULT_POLLING.backoffCoefficient,
    deadline: ms(polling?.deadline, DEFAULT_POLLING.deadline),
  };
}

export type RunState = ReturnType<typeof initialState>;

export function initialState(input: AgentJobInput, now: number) {
  const polling = resolvePolling(input.polling);
  const carried = input.continuation;
  return {
    input,
    projectId: input.projectId,
    polling,
    deadlineAt: carried?.deadlineAt ?? now + polling.deadline,
    continuedRuns: carried?.continuedRuns ?? 0,
    followUps: new FollowUpQueue(carried),
    /** A new run of a job it did not create: the follow-ups earlier runs sent are read before the job (readJob). */
    earlierUnread: carried === undefined ? input.jobId !== undefined : carried.earlierUnread === true,
    job: carried?.job ?? (input.jobId === undefined ? null : unreadJob(input.jobId)),
    get jobId(): string | null {
      return this.job?.id ?? null;
    },
    polls: carried?.polls ?? 0,
    /** The running poll activity (its retries are the waits between reads). */
    poll: null as Promise<void> | null,
    pollStartedAt: 0,
    /** How the poll activity ended the job's workflow (not found, refused, deadline): thrown by the loop. */
    pollFailure: null as Error | null,
    /** A message went out since the last read: the job is read again before it counts as finished. */
    pollAfterMessage: carried?.pollAfterMessage ?? false,
    /** A follow-up was refused with 409: the job is read before the next one is sent. */
    readBeforeNextMessage: false,
    inFlight: null as string | null,
    notAccepted: carried?.notAcceptedFollowUps ?? 0,
    lastError: carried?.lastError ?? null,
    /** When the create (before the job exists) or the head follow-up may be sent again, and how often it was. */
    resendAttempt: carried?.resendAttempt ?? 0,
    resendAt: carried?.resendAt ?? 0,
    /** Set when the run ends in failure or cancellation: new follow-ups are not accepted. */
    closingReason: null as string | null,
    budget: null as BudgetPermits | null,
    queuedForBudget: false,
    budgetRefusal: undefined as BudgetRefusal | undefined,
    alreadyCreatedBy: carried?.alreadyCreatedBy,
  };
}

/** A job known by its id only (attached, or named by a create answer or record), until it is read. */
export function unreadJob(id: string): AgentJob {
  return { id, status: STATUS_UNREAD, prLink: null };
}

export function statusOf(state: RunState): string {
  return state.job?.status ?? STATUS_NOT_CREATED;
}

/** The job's status was read (not only its id known: attached, or named by a create answer or record). */
export function isRead(state: RunState): boolean {
  return state.job !== null && state.job.status !== STATUS_UNREAD;
}

export function needsPolling(state: RunState): boolean {
  return state.job !== null && (!isTerminal(state.job.status) || state.pollAfterMessage);
}

export function isFinished(state: RunState): boolean {
  return (
    state.job !== null && !needsPolling(state) && state.poll === null && state.followUps.pendingCount === 0
  );
}

export function toAgentJobState(state: RunState): AgentJobState {
  const { job } = state;
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
    inFlight: state.inFlight,
    pendingFollowUps: state.followUps.pendingCount,
    notAcceptedFollowUps: state.notAccepted,
    followUps: state.followUps.records(),
    lastError: state.lastError,
    deadlineAt: iso(state.deadlineAt),
    polling: state.polling,
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
    // A poll running now may have started before the last message: the next run reads the job again.
    pollAfterMessage: state.pollAfterMessage || state.poll !== null,
    ...state.followUps.snapshot(),
    lastError: state.lastError,
    resendAt: state.resendAt,
    resendAttempt: state.resendAttempt,
    notAcceptedFollowUps: state.notAccepted,
    continuedRuns: state.continuedRuns + 1,
    ...(state.alreadyCreatedBy === undefined ? {} : { alreadyCreatedBy: state.alreadyCreatedBy }),
    ...(state.earlierUnread ? { earlierUnread: true as const } : {}),
  };
}

/** Keeps the search attributes (upserted only when they change: each upsert is an event) and current details. */
export function refreshVisibility(state: RunState): void {
  const current = workflowInfo().typedSearchAttributes;
  const wanted: SearchAttributeUpdatePair[] = [
    { key: DocsProjectIdKey, value: state.projectId },
    ...(state.jobId === null ? [] : [{ key: AgentJobIdKey, value: state.jobId }]),
    { key: AgentJobStatusKey, value: statusOf(state) },
  ];
  const changed = wanted.filter((pair) => current.get(pair.key) !== pair.value);
  if (changed.length > 0) upsertSearchAttributes(changed);
  const counts = { pending: 0, delivered: 0, rejected: 0, outcome_unknown: 0 };
  for (const record of state.followUps.records()) counts[record.status] += 1;
  const until = state.budget?.waitingUntil;
  setCurrentDetails(
    [
      `**Status:** ${statusOf(state)} · **Job:** ${state.jobId ?? 'not created yet'} · **Project:** ${state.projectId}`,
      `**Polls:** ${state.polls} · **Deadline:** ${iso(state.deadlineAt)}` +
        (state.poll === null
          ? ''
          : ' · reading in the pending activity pollAgentJob (its last failure, next attempt)'),
      `**Follow-ups:** ${counts.pending} pending, ${counts.delivered} delivered, ${counts.rejected} rejected, ${counts.outcome_unknown} outcome unknown`,
      state.inFlight ? `**In flight:** ${state.inFlight}` : '',
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

/** How an update handler learns the fate of its follow-up (in memory only: updates never cross a run). */
export interface FollowUpWaiter {
  delivered(job: AgentJob): void;
  failed(status: 'rejected' | 'outcome_unknown' | 'not_sent', reason: string): void;
}

export type FollowUpQueueSnapshot = Pick<
  AgentJobContinuation,
  'followUps' | 'pendingFollowUps' | 'unnamedFollowUps' | 'sentFollowUps'
>;

/**
 * The follow-ups of one job, in arrival order: the queue still to send, the ledger of messageIds the service may
 * have (the duplicate check, never trimmed) and the settled records shown in state and result (prompts shortened,
 * oldest dropped past a cap, one per messageId). Signals and updates share this one queue; one loop drains it.
 */
export class FollowUpQueue {
  readonly #records: FollowUpRecord[];
  readonly #queue: QueuedFollowUp[];
  readonly #sent: SentFollowUpLedger;
  #unnamed: number;

  constructor(carried?: FollowUpQueueSnapshot) {
    this.#records = [...(carried?.followUps ?? [])];
    this.#queue = (carried?.pendingFollowUps ?? []).map((p) => ({ ...p }));
    this.#sent = new SentFollowUpLedger(carried?.sentFollowUps);
    this.#unnamed = carried?.unnamedFollowUps ?? 0;
  }

  /**
   * What earlier runs of this workflow id sent and settled, learned after this run started (readJob), before
   * anything is sent: no messageId they sent is sent again. An unnamed follow-up whose id they used is renamed,
   * and what passes the job's bound is refused.
   */
  addEarlier(earlier: EarlierFollowUps): void {
    this.#sent.add(earlier.sentFollowUps);
    const known = new Set(this.#records.map((record) => record.messageId));
    this.#records.unshift(...earlier.followUps.filter((record) => !known.has(record.messageId)));
    for (const item of [...this.#queue]) {
      const status = this.#sent.statusOf(item.messageId);
      if (status === undefined) continue;
      if (item.unnamed) {
        item.messageId = this.nextUnnamedId();
        continue;
      }
      this.#queue.splice(this.#queue.indexOf(item), 1);
      item.waiter?.failed('not_sent', `already sent by an earlier run of this workflow id (${status})`);
    }
    while (this.#queue.length > 0 && this.#sent.size + this.#queue.length > FOLLOW_UP_LIMITS.maxPerJob) {
      const item = this.#queue.pop() as QueuedFollowUp;
      this.#record(item.messageId, item.prompt, 'rejected', perJobRefusal(null));
      item.waiter?.failed('not_sent', perJobRefusal(null));
    }
    this.#trim();
  }

  /**
   * The id of a signal sent without one: numbered in arrival order (the count crosses continue-as-new), skipping
   * any id this job knows already (an earlier run of the workflow id numbered its own from 1 too).
   */
  nextUnnamedId(): string {
    const taken = (id: string) =>
      this.statusOf(id) !== undefined || this.#records.some((record) => record.messageId === id);
    let id: string;
    do id = `followup-${++this.#unnamed}`;
    while (taken(id));
    return id;
  }

  /** The status of a messageId queued or sent for this job, if any (a refused one is not: it may come again). */
  statusOf(messageId: string): FollowUpStatus | undefined {
    if (this.#queue.some((item) => item.messageId === messageId)) return 'pending';
    return this.#sent.statusOf(messageId);
  }

  get pendingCount(): number {
    return this.#queue.length;
  }

  refusal(jobId: string | null): string | undefined {
    const { maxPending, maxPerJob } = FOLLOW_UP_LIMITS;
    if (this.#queue.length >= maxPending) {
      return `${maxPending} follow-ups are already waiting to be sent; try again later`;
    }
    if (this.#sent.size + this.#queue.length >= maxPerJob) return perJobRefusal(jobId);
    return undefined;
  }

  head(): PendingFollowUp | undefined {
    return this.#queue[0];
  }

  enqueue(messageId: string, prompt: string, waiter?: FollowUpWaiter): void {
    this.#forgetRecord(messageId);
    this.#queue.push({ messageId, prompt, ...(waiter ? { waiter } : {}) });
  }

  /** A signal without a messageId, queued under the next unnamed id. */
  enqueueUnnamed(prompt: string): void {
    this.#queue.push({ messageId: this.nextUnnamedId(), prompt, unnamed: true });
  }

  recordNotAccepted(messageId: string, prompt: string, reason: string): void {
    this.#forgetRecord(messageId);
    this.#record(messageId, prompt, 'rejected', reason);
  }

  /**
   * The head goes to the service now: until its answer, the service may have it (outcome unknown). `false`: the
   * service did not take it and cannot have acted on it, so it waits to be sent again.
   */
  sendingHead(sending = true): void {
    const first = this.#queue[0];
    if (first) this.#sent.set(first.messageId, sending ? 'outcome_unknown' : undefined);
  }

  deliverHead(job: AgentJob): void {
    const item = this.#queue.shift();
    if (!item) return;
    this.#sent.set(item.messageId, 'delivered');
    this.#record(item.messageId, item.prompt, 'delivered');
    item.waiter?.delivered(job);
  }

  failHead(status: 'rejected' | 'outcome_unknown', reason: string): void {
    const item = this.#queue.shift();
    if (!item) return;
    this.#sent.set(item.messageId, status === 'rejected' ? undefined : status);
    this.#record(item.messageId, item.prompt, status, reason);
    item.waiter?.failed(status, reason);
  }

  rejectAll(reason: string): void {
    while (this.#queue.length > 0) this.failHead('rejected', reason);
  }

  /** The workflow is ending: waiting updates fail; queued signals stay listed as pending (never sent). */
  abandon(reason: string): void {
    for (const item of this.#queue) {
      item.waiter?.failed('not_sent', reason);
      delete item.waiter;
    }
  }

  records(): FollowUpRecord[] {
    const pending = this.#queue.map((item) => ({
      messageId: item.messageId,
      prompt: shortPrompt(item.prompt),
      status: 'pending' as const,
    }));
    return [...this.#records, ...pending];
  }

  sent(): SentFollowUps {
    return this.#sent.toJSON();
  }

  snapshot(): FollowUpQueueSnapshot {
    return {
      followUps: [...this.#records],
      pendingFollowUps: this.#queue.map(({ waiter: _waiter, ...pending }) => pending),
      unnamedFollowUps: this.#unnamed,
      sentFollowUps: this.sent(),
    };
  }

  /** A messageId refused before is listed once, as it stands now. */
  #forgetRecord(messageId: string): void {
    const index = this.#records.findIndex((record) => record.messageId === messageId);
    if (index !== -1) this.#records.splice(index, 1);
  }

  #record(messageId: string, prompt: string, status: FollowUpStatus, error?: string): void {
    this.#records.push({ messageId, prompt: shortPrompt(prompt), status, ...(error ? { error } : {}) });
    this.#trim();
  }

  #trim(): void {
    const excess = this.#records.length - FOLLOW_UP_LIMITS.maxRecords;
    if (excess > 0) this.#records.splice(0, excess);
  }
}

type QueuedFollowUp = PendingFollowUp & { waiter?: FollowUpWaiter };

function perJobRefusal(jobId: string | null): string {
  const { maxPerJob } = FOLLOW_UP_LIMITS;
  return `job ${jobId ?? '(not created yet)'} has taken ${maxPerJob} follow-ups, the most one job takes; start a new job`;
}

function shortPrompt(prompt: string): string {
  return truncate(prompt, FOLLOW_UP_LIMITS.recordPromptChars);
}
