import type { AgentJob, FollowUpRecord, FollowUpStatus, PendingFollowUp } from '../../contract/agent-job';
import { FOLLOW_UP_LIMITS } from '../../contract/agent-job-constants';
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
  pendingFollowUps: PendingFollowUp[];
  omittedFollowUps: number;
  unnamedFollowUps: number;
}

/**
 * The follow-ups of one job, in arrival order: the settled ones (kept small: prompts shortened, oldest dropped
 * past a cap) and the queue still to send. Signals and updates share this one queue; one loop drains it.
 */
export class FollowUpQueue {
  readonly #settled: FollowUpRecord[];
  readonly #queue: QueuedFollowUp[];
  #omitted: number;
  #unnamed: number;

  constructor(carried?: FollowUpQueueSnapshot) {
    this.#settled = carried ? [...carried.followUps] : [];
    this.#queue = carried ? carried.pendingFollowUps.map((p) => ({ ...p })) : [];
    this.#omitted = carried?.omittedFollowUps ?? 0;
    this.#unnamed = carried?.unnamedFollowUps ?? 0;
  }

  /** A deterministic id for a signal sent without one: numbered in arrival order, stable across runs. */
  nextUnnamedId(): string {
    this.#unnamed += 1;
    return `followup-${this.#unnamed}`;
  }

  /** The status of a messageId this workflow has seen, if any. */
  statusOf(messageId: string): FollowUpStatus | undefined {
    if (this.#queue.some((item) => item.messageId === messageId)) return 'pending';
    return this.#settled.find((record) => record.messageId === messageId)?.status;
  }

  get pendingCount(): number {
    return this.#queue.length;
  }

  get isFull(): boolean {
    return this.#queue.length >= FOLLOW_UP_LIMITS.maxPending;
  }

  head(): PendingFollowUp | undefined {
    const first = this.#queue[0];
    return first && { messageId: first.messageId, prompt: first.prompt };
  }

  enqueue(messageId: string, prompt: string, waiter?: FollowUpWaiter): void {
    this.#queue.push({ messageId, prompt, ...(waiter ? { waiter } : {}) });
  }

  /** Records a follow-up not accepted into the queue (invalid signal, queue full): its status is `rejected`. */
  recordNotAccepted(messageId: string, prompt: string, reason: string): void {
    this.#record({ messageId, prompt: shortPrompt(prompt), status: 'rejected', error: reason });
  }

  deliverHead(job: AgentJob): void {
    const item = this.#queue.shift();
    if (!item) return;
    this.#record({ messageId: item.messageId, prompt: shortPrompt(item.prompt), status: 'delivered' });
    item.waiter?.delivered(job);
  }

  failHead(status: 'rejected' | 'outcome_unknown', reason: string): void {
    const item = this.#queue.shift();
    if (!item) return;
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
      ...this.#settled,
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
    for (const record of this.#settled) counts[record.status] += 1;
    return counts;
  }

  snapshot(): FollowUpQueueSnapshot {
    return {
      followUps: [...this.#settled],
      pendingFollowUps: this.#queue.map(({ messageId, prompt }) => ({ messageId, prompt })),
      omittedFollowUps: this.#omitted,
      unnamedFollowUps: this.#unnamed,
    };
  }

  #record(record: FollowUpRecord): void {
    this.#settled.push(record);
    const excess = this.#settled.length - FOLLOW_UP_LIMITS.maxRecords;
    if (excess > 0) {
      this.#settled.splice(0, excess);
      this.#omitted += excess;
    }
  }
}

function shortPrompt(prompt: string): string {
  const max = FOLLOW_UP_LIMITS.recordPromptChars;
  return truncate(prompt, max);
}
