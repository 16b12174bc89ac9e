import type {
  AgentJob,
  FollowUpRecord,
  FollowUpStatus,
  PendingFollowUp,
  SentFollowUps,
} from '../../contract/agent-job';
import { FOLLOW_UP_LIMITS } from '../../contract/agent-job-constants';
import { SentFollowUpLedger } from '../../contract/follow-up-checks';
import { truncate } from '../../contract/text';

/** How an update handler learns the fate of its follow-up (in memory only: updates never cross a run). */
export interface FollowUpWaiter {
  delivered(job: AgentJob): void;
  failed(status: Exclude<FollowUpStatus, 'pending' | 'delivered'> | 'not_sent', reason: string): void;
}

interface QueuedFollowUp extends PendingFollowUp {
  waiter?: FollowUpWaiter;
}

export interface FollowUpQueueSnapshot {
  followUps: FollowUpRecord[];
  pendingFollowUps?: PendingFollowUp[];
  omittedFollowUps?: number;
  unnamedFollowUps?: number;
  sentFollowUps?: SentFollowUps | undefined;
}

type Snapshot = Required<{ [K in keyof FollowUpQueueSnapshot]: NonNullable<FollowUpQueueSnapshot[K]> }>;

/**
 * The follow-ups of one job, in arrival order: the queue still to send, the ledger of messageIds the service may
 * have (the duplicate check, never trimmed) and the settled records shown in state and result (prompts shortened,
 * oldest dropped past a cap, one per messageId). Signals and updates share this one queue; one loop drains it.
 */
export class FollowUpQueue {
  readonly #records: FollowUpRecord[];
  readonly #queue: QueuedFollowUp[];
  readonly #sent: SentFollowUpLedger;
  #omitted: number;
  #unnamed: number;

  constructor(carried: FollowUpQueueSnapshot = { followUps: [] }) {
    this.#records = [...carried.followUps];
    this.#queue = (carried.pendingFollowUps ?? []).map((p) => ({ ...p }));
    this.#sent = new SentFollowUpLedger(carried.sentFollowUps);
    this.#omitted = carried.omittedFollowUps ?? 0;
    this.#unnamed = carried.unnamedFollowUps ?? 0;
  }

  /**
   * What earlier runs of this workflow id sent and settled, learned after this run started (a start again under
   * the same id, answered from the job's create record): no messageId they sent is sent again.
   */
  addEarlier(earlier: { followUps: FollowUpRecord[]; sentFollowUps: SentFollowUps }): void {
    this.#sent.add(earlier.sentFollowUps);
    for (const item of [...this.#queue]) {
      const status = this.#sent.statusOf(item.messageId);
      if (status === undefined) continue;
      this.#queue.splice(this.#queue.indexOf(item), 1);
      item.waiter?.failed('not_sent', `already sent by an earlier run of this workflow id (${status})`);
    }
    const known = new Set(this.#records.map((record) => record.messageId));
    this.#records.unshift(...earlier.followUps.filter((record) => !known.has(record.messageId)));
    const excess = this.#records.length - FOLLOW_UP_LIMITS.maxRecords;
    if (excess > 0) this.#records.splice(0, excess);
  }

  /** A deterministic id for a signal sent without one: numbered in arrival order, stable across runs. */
  nextUnnamedId(): string {
    this.#unnamed += 1;
    return `followup-${this.#unnamed}`;
  }

  /** The status of a messageId queued or sent for this job, if any (a refused one is not: it may come again). */
  statusOf(messageId: string): FollowUpStatus | undefined {
    if (this.#queue.some((item) => item.messageId === messageId)) return 'pending';
    return this.#sent.statusOf(messageId);
  }

  get pendingCount(): number {
    return this.#queue.length;
  }

  /** Why the queue takes no follow-up now, or undefined when it takes one. */
  refusal(jobId: string | null): string | undefined {
    const { maxPending, maxPerJob } = FOLLOW_UP_LIMITS;
    if (this.#queue.length >= maxPending) {
      return `${maxPending} follow-ups are already waiting to be sent; try again later`;
    }
    if (this.#sent.size + this.#queue.length >= maxPerJob) {
      return `job ${jobId ?? '(not created yet)'} has taken ${maxPerJob} follow-ups, the most one job takes; start a new job`;
    }
    return undefined;
  }

  head(): PendingFollowUp | undefined {
    const first = this.#queue[0];
    return first && { messageId: first.messageId, prompt: first.prompt };
  }

  enqueue(messageId: string, prompt: string, waiter?: FollowUpWaiter): void {
    this.#forgetRecord(messageId);
    this.#queue.push({ messageId, prompt, ...(waiter ? { waiter } : {}) });
  }

  /** Records a follow-up not accepted into the queue (invalid signal, queue full): its status is `rejected`. */
  recordNotAccepted(messageId: string, prompt: string, reason: string): void {
    this.#forgetRecord(messageId);
    this.#record({ messageId, prompt: shortPrompt(prompt), status: 'rejected', error: reason });
  }

  /** The head goes to the service now: until its answer, the service may have it (outcome unknown). */
  sendingHead(): void {
    const first = this.#queue[0];
    if (first) this.#sent.set(first.messageId, 'outcome_unknown');
  }

  /** The service did not take the head and cannot have acted on it: it waits to be sent again, not sent yet. */
  headNotTaken(): void {
    const first = this.#queue[0];
    if (first) this.#sent.delete(first.messageId);
  }

  deliverHead(job: AgentJob): void {
    const item = this.#queue.shift();
    if (!item) return;
    this.#sent.set(item.messageId, 'delivered');
    this.#record({ messageId: item.messageId, prompt: shortPrompt(item.prompt), status: 'delivered' });
    item.waiter?.delivered(job);
  }

  failHead(status: 'rejected' | 'outcome_unknown', reason: string): void {
    const item = this.#queue.shift();
    if (!item) return;
    if (status === 'rejected') this.#sent.delete(item.messageId);
    else this.#sent.set(item.messageId, status);
    this.#record({ messageId: item.messageId, prompt: shortPrompt(item.prompt), status, error: reason });
    item.waiter?.failed(status, reason);
  }

  /** Settles every queued follow-up as rejected without sending it (the job takes no more messages). */
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

  /** Settled follow-ups first, then the queue (status pending), as getState and results show them. */
  records(): FollowUpRecord[] {
    return [
      ...this.#records,
      ...this.#queue.map((item) => ({
        messageId: item.messageId,
        prompt: shortPrompt(item.prompt),
        status: 'pending' as const,
      })),
    ];
  }

  countByStatus(): Record<FollowUpStatus, number> {
    const counts: Record<FollowUpStatus, number> = {
      pending: this.#queue.length,
      delivered: 0,
      rejected: 0,
      outcome_unknown: 0,
    };
    for (const record of this.#records) counts[record.status] += 1;
    return counts;
  }

  sent(): SentFollowUps {
    return this.#sent.toJSON();
  }

  snapshot(): Snapshot {
    return {
      followUps: [...this.#records],
      pendingFollowUps: this.#queue.map(({ messageId, prompt }) => ({ messageId, prompt })),
      omittedFollowUps: this.#omitted,
      unnamedFollowUps: this.#unnamed,
      sentFollowUps: this.sent(),
    };
  }

  /** A messageId refused before is listed once, as it stands now. */
  #forgetRecord(messageId: string): void {
    const index = this.#records.findIndex((record) => record.messageId === messageId);
    if (index !== -1) this.#records.splice(index, 1);
  }

  #record(record: FollowUpRecord): void {
    this.#records.push(record);
    const excess = this.#records.length - FOLLOW_UP_LIMITS.maxRecords;
    if (excess > 0) {
      this.#records.splice(0, excess);
      this.#omitted += excess;
    }
  }
}

function shortPrompt(prompt: string): string {
  return truncate(prompt, FOLLOW_UP_LIMITS.recordPromptChars);
}
