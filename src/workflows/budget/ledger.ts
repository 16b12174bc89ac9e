import {
  MAX_PERMITS_PER_ASK,
  type BudgetLimiterState,
  type BudgetRefusal,
  type PermitRelease,
  type PermitRequest,
  type PermitTicket,
  type RateBudget,
} from '../../contract/budget';
import { emptyLedger, type LedgerSnapshot } from './ledger-snapshot';

const RECENT_PERMITS = 256;
/** The first pause after a refusal without Retry-After; each refusal in a row doubles it. */
const FIRST_BACKOFF_MS = 2_000;

/** The most a window is padded (0.14 % of an hour): a permit may be held 4.75 s, a round of an export's runs. */
const MAX_PADDING_MS = 5_000;
/**
 * The least padding: the delay from a grant to its request (a signal, a workflow task, an activity task in another
 * process) varies by hundreds of milliseconds on a loaded host, whatever the window's length.
 */
const MIN_PADDING_MS = 1_000;

/** An exclusive permit not released in this time (its holder died) lets the next one go. */
const EXCLUSIVE_HOLD_MS = 90_000;

/**
 * The budget's book: a sliding log of grants (at most `requests` in any window, so a fixed-window service never
 * refuses us, and a quiet budget grants a whole window at once), per-project FIFO queues served round robin,
 * and pauses after the service refused a request (Retry-After, or a doubling backoff capped at the window).
 * Pure and deterministic: the limiter workflow passes the time in.
 */
export class BudgetLedger {
  #s: LedgerSnapshot;

  constructor(budget: RateBudget, snapshot?: LedgerSnapshot) {
    this.#s = snapshot ?? emptyLedger(budget);
  }

  snapshot(): LedgerSnapshot {
    return JSON.parse(JSON.stringify(this.#s)) as LedgerSnapshot;
  }

  get waiting(): number {
    return this.#s.queues.reduce((sum, [, queue]) => sum + queue.length, 0);
  }

  /**
   * Queues a request (the newest budget configuration wins) and estimates when it will be granted; undefined for
   * a repeat of a request already queued or granted.
   */
  enqueue(request: PermitRequest, now: number): PermitTicket | undefined {
    if (this.#s.recent.includes(request.permitId) || this.requestOf(request.permitId) !== undefined) {
      return undefined;
    }
    this.#s.budget = request.budget;
    if (request.refusal) this.refuse(request.refusal, now);
    const waitingAhead = this.waiting;
    let entry = this.#s.queues.find(([projectId]) => projectId === request.projectId);
    if (!entry) {
      entry = [request.projectId, []];
      this.#s.queues.push(entry);
    }
    const queue = entry[1];
    // In order of requestedAt (a job's start time), then arrival.
    let at = queue.length;
    while (at > 0 && (queue[at - 1]?.requestedAt ?? 0) > request.requestedAt) at -= 1;
    queue.splice(at, 0, request);
    return { permitId: request.permitId, estimatedGrantAt: this.#estimate(waitingAhead, now), waitingAhead };
  }

  /** The request of a waiting permit. */
  requestOf(permitId: string): PermitRequest | undefined {
    for (const [, queue] of this.#s.queues) {
      const request = queue.find((r) => r.permitId === permitId);
      if (request) return request;
    }
    return undefined;
  }

  /** The requesters (workflow ids) of the waiting permits, in the order of the round robin. */
  queuedRequesters(): string[] {
    return [...new Set(this.#s.queues.flatMap(([, queue]) => queue.map((r) => r.requesterId)))];
  }

  /** Drops a waiting permit whose requester has ended. */
  cancel(permitId: string): void {
    for (const entry of this.#s.queues) entry[1] = entry[1].filter((r) => r.permitId !== permitId);
    this.#s.queues = this.#s.queues.filter(([, q]) => q.length > 0);
  }

  /**
   * The service refused a request spent on a permit: every user of the budget pauses, for its Retry-After or a
   * doubling backoff capped at the window, and stays cautious (grants spaced evenly) for a window after.
   */
  refuse(refusal: BudgetRefusal, now: number): void {
    const s = this.#s;
    s.refusals += 1;
    const sentBeforePause = refusal.grantedAt < s.pauseStartedAt;
    // A request already in flight when the pause began adds nothing the pause does not know.
    if (sentBeforePause && refusal.retryAfterMs === undefined && s.pausedUntil > now) return;
    let pauseMs: number;
    if (refusal.retryAfterMs !== undefined) {
      pauseMs = refusal.retryAfterMs;
    } else {
      if (now - s.lastRefusalAt > s.budget.windowMs + s.streak * FIRST_BACKOFF_MS) s.streak = 0;
      if (!sentBeforePause) s.streak += 1;
      pauseMs = Math.min(s.budget.windowMs, FIRST_BACKOFF_MS * 2 ** Math.max(0, s.streak - 1));
    }
    s.lastRefusalAt = now;
    if (now + pauseMs > s.pausedUntil) {
      if (s.pausedUntil <= now) s.pauseStartedAt = now;
      s.pausedUntil = now + pauseMs;
    }
    s.cautiousUntil = Math.max(s.cautiousUntil, s.pausedUntil + s.budget.windowMs);
  }

  /**
   * A permit its requester is done with. Still waiting (the requester gave up on it: cancelled, or ending): it is
   * dropped, so that no grant goes to a run that has ended, and an ask of it still on its way is ignored. The
   * exclusive permit in use: its request landed at the service some time between its grant and now (a loaded
   * worker can take seconds), so its place in the window moves to now; the permit `requests` later is then
   * granted a whole window after the request surely landed, and a fixed-window service never refuses it.
   */
  release(permitId: string, now: number): void {
    if (this.requestOf(permitId) !== undefined) this.cancel(permitId);
    if (!this.#s.recent.includes(permitId)) this.#remember(permitId);
    const exclusive = this.#s.exclusive;
    if (exclusive?.permitId !== permitId) return;
    this.#s.exclusive = null;
    if (exclusive.grantedAt === undefined) return;
    const grants = this.#s.grants;
    const at = grants.indexOf(exclusive.grantedAt);
    if (at < 0) return;
    grants.splice(at, 1);
    let insertAt = grants.length;
    while (insertAt > 0 && (grants[insertAt - 1] ?? 0) > now) insertAt -= 1;
    grants.splice(insertAt, 0, now);
  }

  /** The grant (of `count` permits) could not be delivered (the requester has ended): its places are free again. */
  forget(permitId: string, grantedAt: number, count = 1): void {
    this.#unlog(grantedAt, count);
    if (this.#s.exclusive?.permitId === permitId) this.#s.exclusive = null;
  }

  /** Permits granted and never spent come back (once per `releaseId`): their places in the window are free. */
  releaseUnspent({ releaseId, unspent = [] }: PermitRelease): void {
    if (this.#s.recent.includes(releaseId)) return;
    this.#remember(releaseId);
    for (const { grantedAt, count } of unspent) {
      this.#s.granted -= this.#unlog(grantedAt, Math.min(count, MAX_PERMITS_PER_ASK));
    }
  }

  /** Removes up to `count` grants made at `grantedAt` from the window; returns how many it found. */
  #unlog(grantedAt: number, count: number): number {
    let removed = 0;
    for (; removed < count; removed++) {
      const at = this.#s.grants.indexOf(grantedAt);
      if (at < 0) break;
      this.#s.grants.splice(at, 1);
    }
    return removed;
  }

  #remember(id: string): void {
    this.#s.recent.push(id);
    if (this.#s.recent.length > RECENT_PERMITS) this.#s.recent.shift();
  }

  /** The next permit to grant now, if the budget, a pause or an exclusive holder allows one. */
  grant(now: number): PermitRequest | undefined {
    const s = this.#s;
    if (this.#readyAt(now) > now) {
      if (this.waiting > 0) {
        s.shortAt = now;
        s.backlog = true;
      }
      return undefined;
    }
    const exclusiveBusy = s.exclusive !== null && s.exclusive.until > now;
    for (let turn = 0; turn < s.queues.length; turn++) {
      const entry = s.queues[0];
      if (!entry) break;
      const [projectId, queue] = entry;
      const head = queue[0];
      // Round robin: the project served (or skipped) goes to the back of the turn.
      s.queues.push(s.queues.shift() ?? [projectId, queue]);
      if (!head || (head.exclusive === true && exclusiveBusy) || settlesAt(head) > now) continue;
      queue.shift();
      if (queue.length === 0) s.queues = s.queues.filter(([, q]) => q.length > 0);
      s.grants.push(now);
      s.granted += 1;
      this.#remember(head.permitId);
      if (head.count !== undefined) this.#active(head.requesterId, now);
      if (s.backlog === true) {
        s.shortAt = now;
        if (this.waiting === 0) s.backlog = false;
      }
      if (head.exclusive === true) {
        s.exclusive = { permitId: head.permitId, until: now + EXCLUSIVE_HOLD_MS, grantedAt: now };
      }
      return head;
    }
    return undefined;
  }

  /**
   * After `head` was granted: up to `head.count - 1` more permits with it, only from the requester's share of
   * the spare (nobody else waits, no pause, the budget did not run short in the last window). Returns how many.
   */
  grantExtras(head: PermitRequest, now: number): number {
    const want = Math.min(MAX_PERMITS_PER_ASK, head.count ?? 1) - 1;
    if (want <= 0 || head.exclusive === true || this.waiting > 0) return 0;
    const extra = Math.min(want, this.spare(now));
    for (let i = 0; i < extra; i++) this.#s.grants.push(now);
    this.#s.granted += extra;
    return extra;
  }

  /**
   * The budget's room per requester: free permits in the window less those waiting, shared among the requesters
   * granted one in the window (each measures it against what it needs next). 0 while paused or cautious after a
   * refusal, and for a window after a permit had to wait: then the budget binds.
   */
  spare(now: number): number {
    this.#prune(now);
    const s = this.#s;
    const horizon = now - this.#paddedWindow();
    if (s.pausedUntil > now || now < s.cautiousUntil || (s.shortAt ?? -Infinity) > horizon) return 0;
    s.requesters = (s.requesters ?? []).filter(([, at]) => at > horizon);
    const free = s.budget.requests - s.grants.length - this.waiting;
    return Math.max(0, Math.floor(free / Math.max(1, s.requesters.length)));
  }

  /**
   * How long after its grant a permit may still be spent: the window's padding less 250 ms for the request to
   * land (4.75 s of 5 s for an hour's window), at least half the padding.
   */
  get spendWithinMs(): number {
    const padding = this.#paddedWindow() - this.#s.budget.windowMs;
    return Math.max(Math.floor(padding / 2), padding - 250);
  }

  /** When a waiting permit could next be granted; undefined when nobody waits. */
  wakeAt(now: number): number | undefined {
    if (this.waiting === 0) return undefined;
    const ready = this.#readyAt(now);
    const exclusive = this.#s.exclusive;
    const exclusiveFreeAt = exclusive !== null && exclusive.until > now ? exclusive.until : 0;
    let earliest = Number.POSITIVE_INFINITY;
    for (const [, queue] of this.#s.queues) {
      const head = queue[0];
      if (!head) continue;
      const at = Math.max(ready, head.exclusive === true ? exclusiveFreeAt : 0, settlesAt(head));
      earliest = Math.min(earliest, at);
    }
    return earliest;
  }

  view(now: number): BudgetLimiterState {
    this.#prune(now);
    const s = this.#s;
    return {
      budget: s.budget,
      grantedInWindow: s.grants.length,
      waitingByProject: Object.fromEntries(s.queues.map(([projectId, q]) => [projectId, q.length])),
      pausedUntil: s.pausedUntil > now ? s.pausedUntil : null,
      refusals: s.refusals,
      granted: s.granted,
    };
  }

  /** Notes a requester that asks with `count` (exports): only those share the spare, and the list stays short. */
  #active(requesterId: string, now: number): void {
    const horizon = now - this.#paddedWindow();
    const requesters = (this.#s.requesters ?? []).filter(([id, at]) => at > horizon && id !== requesterId);
    requesters.push([requesterId, now]);
    this.#s.requesters = requesters;
  }

  /** The earliest time a grant is allowed, ignoring who waits. */
  #readyAt(now: number): number {
    this.#prune(now);
    const s = this.#s;
    let ready = Math.max(now, s.pausedUntil);
    if (s.grants.length >= s.budget.requests) {
      const oldest = s.grants[s.grants.length - s.budget.requests] ?? now;
      ready = Math.max(ready, oldest + this.#paddedWindow());
    }
    const last = s.grants[s.grants.length - 1];
    if (now < s.cautiousUntil && last !== undefined) {
      ready = Math.max(ready, last + s.budget.windowMs / s.budget.requests);
    }
    return ready;
  }

  #estimate(waitingAhead: number, now: number): number {
    const s = this.#s;
    const ready = this.#readyAt(now);
    const free = s.budget.requests - s.grants.length;
    if (waitingAhead < free) return ready;
    const windows = Math.floor((waitingAhead - free) / s.budget.requests);
    const index = (waitingAhead - free) % s.budget.requests;
    const base = s.grants[index] ?? now;
    return Math.max(ready, base + (windows + 1) * this.#paddedWindow());
  }

  /**
   * A grant becomes a request a little later (scheduling, the network, a permit held for a run of pages): the
   * window is padded by 2% (between MIN_PADDING_MS and MAX_PADDING_MS) so that two grants a window apart never
   * land in one window of the service.
   */
  #paddedWindow(): number {
    const { windowMs } = this.#s.budget;
    return windowMs + Math.min(MAX_PADDING_MS, Math.max(MIN_PADDING_MS, Math.ceil(windowMs * 0.02)));
  }

  #prune(now: number): void {
    const horizon = now - this.#paddedWindow();
    const grants = this.#s.grants;
    let drop = 0;
    while (drop < grants.length && (grants[drop] ?? now) <= horizon) drop += 1;
    if (drop > 0) grants.splice(0, drop);
  }
}

function settlesAt(request: PermitRequest): number {
  return request.settleMs === undefined ? 0 : request.requestedAt + request.settleMs;
}
