import type { BudgetRefusal, PermitAsk, PermitGrant, PermitRelease, RateBudget } from '../../contract/budget';

/** The first pause after a refusal without Retry-After; each refusal in a row doubles it, up to the window. */
const FIRST_BACKOFF_MS = 2_000;
/** The most padding: 5 s of an hour's window; a batch's permit may be held 4.75 s, a round of an export's runs. */
const MAX_PADDING_MS = 5_000;
/**
 * The least padding: the delay from a grant to its request (a signal, a workflow task, an activity task in another
 * process) varies by hundreds of milliseconds on a loaded host, whatever the window's length.
 */
const MIN_PADDING_MS = 1_000;
/**
 * The least time a batch's permits must keep for a stock of them to be worth holding (a round of an export's runs
 * spends them over about a second): a shorter padding (1 s for a 10 s window) leaves no spare, one permit an ask.
 */
const MIN_HOLD_MS = 1_000;
/** An exclusive permit not released in this time (its holder died) lets the next one go. */
const EXCLUSIVE_HOLD_MS = 90_000;
/** Permits released before their grant, remembered so that an ask of theirs still on its way is ignored. */
const WITHDRAWN_KEPT = 256;

/** What a limiter carries across continue-as-new. */
export type LedgerSnapshot = ReturnType<typeof emptyLedger>;

/**
 * The budget's book: a sliding log of grants (at most `requests` in any padded window, so a fixed-window service
 * never refuses us, and a quiet budget grants a whole window at once), per-project FIFO queues served round
 * robin, and a pause after the service refused a request (Retry-After, or a doubling backoff capped at the
 * window), then a window of evenly spread grants. Pure and deterministic: the limiter workflow passes the time in.
 */
export class BudgetLedger {
  #s: LedgerSnapshot;

  constructor(budget: RateBudget, snapshot?: LedgerSnapshot) {
    this.#s = snapshot === undefined ? emptyLedger(budget) : upgraded(snapshot);
  }

  snapshot(): LedgerSnapshot {
    return JSON.parse(JSON.stringify(this.#s)) as LedgerSnapshot;
  }

  get waiting(): number {
    return this.#s.queues.reduce((sum, [, queue]) => sum + queue.length, 0);
  }

  /**
   * Queues an ask behind those of its project (the newest budget configuration wins) and estimates when it will
   * be granted; undefined for a repeat (waiting, granted within the window, or withdrawn).
   */
  enqueue(ask: PermitAsk, now: number): number | undefined {
    const s = this.#s;
    const { permitId } = ask;
    const known = [...this.#asks(), ...s.log].some((entry) => entry.permitId === permitId);
    if (known || s.withdrawn.includes(permitId)) return undefined;
    s.budget = ask.budget;
    if (ask.refusal) this.#refuse(ask.refusal, now);
    const waitingAhead = this.waiting;
    const queue = s.queues.find(([projectId]) => projectId === ask.projectId);
    if (queue) queue[1].push(ask);
    else s.queues.push([ask.projectId, [ask]]);
    return this.#readyAt(now, waitingAhead);
  }

  /** The requesters (workflow ids) of the waiting asks, in the order of the round robin. */
  queuedRequesters(): string[] {
    return [...new Set(this.#asks().map((ask) => ask.requesterId))];
  }

  /**
   * A permit its requester is done with (see PermitRelease). The exclusive permit's request landed at the service
   * some time between its grant and now (a loaded worker can take seconds): its place in the window moves to now,
   * so the permit `requests` later is granted a whole window after the request surely landed.
   */
  release({ permitId, unused = 0 }: PermitRelease, now: number): void {
    const s = this.#s;
    if (typeof permitId !== 'string') return; // the previous version's return of unspent permits by grant time
    const exclusive = s.exclusive?.permitId === permitId;
    if (exclusive) s.exclusive = null;
    const logged = s.log.find((g) => g.permitId === permitId);
    if (logged === undefined) {
      for (const entry of s.queues) entry[1] = entry[1].filter((ask) => ask.permitId !== permitId);
      s.queues = s.queues.filter(([, queue]) => queue.length > 0);
      s.withdrawn = [...s.withdrawn, permitId].slice(-WITHDRAWN_KEPT);
      return;
    }
    if (logged.released) return;
    logged.released = true;
    const freed = Math.max(0, Math.min(unused, logged.count));
    logged.count -= freed;
    s.granted -= freed;
    if (exclusive) logged.at = now;
    s.log = s.log.filter((g) => g.count > 0).sort((a, b) => a.at - b.at);
  }

  /** The next ask granted now, if the budget, a pause and the exclusive holder allow one, with its grant. */
  grant(now: number): { ask: PermitAsk; grant: PermitGrant } | undefined {
    const s = this.#s;
    if (this.#readyAt(now) > now) {
      if (this.waiting > 0) [s.shortAt, s.backlog] = [now, true];
      return undefined;
    }
    const exclusiveBusy = s.exclusive !== null && s.exclusive.until > now;
    for (let turn = 0; turn < s.queues.length; turn++) {
      // Round robin: the project served (or skipped) goes to the back of the turn.
      const entry = s.queues.shift() as [string, PermitAsk[]];
      s.queues.push(entry);
      const ask = entry[1][0];
      if (ask === undefined || (ask.exclusive === true && exclusiveBusy)) continue;
      entry[1].shift();
      s.queues = s.queues.filter(([, queue]) => queue.length > 0);
      if (s.backlog) [s.shortAt, s.backlog] = [now, this.waiting > 0];
      const logged: LedgerSnapshot['log'][number] = { permitId: ask.permitId, at: now, count: 1 };
      s.log.push(logged);
      s.requesters = [...s.requesters.filter(([id]) => id !== ask.requesterId), [ask.requesterId, now]];
      // The others of a batch come only from the requester's share of the spare, and only when nobody waits.
      if (ask.exclusive !== true && this.waiting === 0) {
        logged.count += Math.min((ask.count ?? 1) - 1, this.#spare(now));
      }
      s.granted += logged.count;
      if (ask.exclusive === true) s.exclusive = { permitId: ask.permitId, until: now + EXCLUSIVE_HOLD_MS };
      return {
        ask,
        grant: {
          permitId: ask.permitId,
          grantedAt: now,
          count: logged.count,
          spare: this.#spare(now),
          spendBy: now + this.#spendWithinMs(),
        },
      };
    }
    return undefined;
  }

  /** When a waiting ask could next be granted; undefined when nobody waits. */
  wakeAt(now: number): number | undefined {
    if (this.waiting === 0) return undefined;
    const ready = this.#readyAt(now);
    const { exclusive } = this.#s;
    const onlyExclusive = this.#s.queues.every(([, queue]) => queue[0]?.exclusive === true);
    return onlyExclusive && exclusive !== null ? Math.max(ready, exclusive.until) : ready;
  }

  /** What the limiter shows: its query's answer and the source of its current details. */
  view(now: number) {
    this.#prune(now);
    const s = this.#s;
    return {
      budget: s.budget,
      grantedInWindow: this.#times().length,
      waitingByProject: Object.fromEntries(s.queues.map(([projectId, queue]) => [projectId, queue.length])),
      pausedUntil: s.pausedUntil > now ? s.pausedUntil : null,
      refusals: s.refusals,
      granted: s.granted,
    };
  }

  #asks(): PermitAsk[] {
    return this.#s.queues.flatMap(([, queue]) => queue);
  }

  /** One time per permit in the window, oldest first. */
  #times(): number[] {
    return this.#s.log.flatMap((g) => Array<number>(g.count).fill(g.at));
  }

  /**
   * The service refused a request spent on a permit: every user of the budget pauses, for its Retry-After or a
   * doubling backoff capped at the window (a request already in flight when the pause began adds nothing the
   * pause does not know), and grants are spread evenly for a window after.
   */
  #refuse(refusal: BudgetRefusal, now: number): void {
    const s = this.#s;
    s.refusals += 1;
    const sentBeforePause = refusal.grantedAt < s.pauseStartedAt;
    if (sentBeforePause && refusal.retryAfterMs === undefined && s.pausedUntil > now) return;
    let pauseMs = refusal.retryAfterMs;
    if (pauseMs === undefined) {
      if (now >= s.spreadUntil) s.streak = 0;
      if (!sentBeforePause) s.streak += 1;
      pauseMs = Math.min(s.budget.windowMs, FIRST_BACKOFF_MS * 2 ** Math.max(0, s.streak - 1));
    }
    if (now + pauseMs > s.pausedUntil) {
      if (s.pausedUntil <= now) s.pauseStartedAt = now;
      s.pausedUntil = now + pauseMs;
    }
    s.spreadUntil = Math.max(s.spreadUntil, s.pausedUntil + s.budget.windowMs);
  }

  /** The budget's room per requester now (see PermitGrant.spare): each measures it against what it needs next. */
  #spare(now: number): number {
    this.#prune(now);
    const s = this.#s;
    const horizon = now - this.#paddedWindow();
    if (s.pausedUntil > now || now < s.spreadUntil || s.shortAt > horizon) return 0;
    if (this.#spendWithinMs() < MIN_HOLD_MS) return 0;
    s.requesters = s.requesters.filter(([, at]) => at > horizon);
    const free = s.budget.requests - this.#times().length - this.waiting;
    return Math.max(0, Math.floor(free / Math.max(1, s.requesters.length)));
  }

  /**
   * How long after its grant a permit may still be spent: the window's padding less 250 ms for the request to
   * land (4.75 s of 5 s for an hour's window), at least half the padding.
   */
  #spendWithinMs(): number {
    const padding = this.#paddedWindow() - this.#s.budget.windowMs;
    return Math.max(Math.floor(padding / 2), padding - 250);
  }

  /** The earliest time the permit with `waitingAhead` permits queued before it could be granted (0: the next). */
  #readyAt(now: number, waitingAhead = 0): number {
    this.#prune(now);
    const { budget, pausedUntil, spreadUntil } = this.#s;
    const times = this.#times();
    let ready = Math.max(now, pausedUntil);
    const beyondFree = waitingAhead - (budget.requests - times.length);
    if (beyondFree >= 0) {
      const windows = Math.floor(beyondFree / budget.requests) + 1;
      ready = Math.max(ready, (times[beyondFree % budget.requests] ?? now) + windows * this.#paddedWindow());
    }
    const last = times.at(-1);
    if (now < spreadUntil && last !== undefined)
      ready = Math.max(ready, last + budget.windowMs / budget.requests);
    return ready;
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
    this.#s.log = this.#s.log.filter((g) => g.at > horizon);
  }
}

function emptyLedger(budget: RateBudget) {
  return {
    budget,
    /** Grants inside the padded window, oldest first (an ask of one of them again is a repeat): their places. */
    log: [] as { permitId: string; at: number; count: number; released?: true }[],
    /** Waiting asks per project, in the order received; the array order is the round-robin turn. */
    queues: [] as [string, PermitAsk[]][],
    exclusive: null as { permitId: string; until: number } | null,
    withdrawn: [] as string[],
    /** After a refusal, nothing is granted until `pausedUntil`, and grants are spread evenly until `spreadUntil`. */
    pausedUntil: 0,
    pauseStartedAt: 0,
    spreadUntil: 0,
    /** Refusals without Retry-After in a row: the backoff doubles with each. */
    streak: 0,
    /** The last time a permit had to wait for the budget (the budget binds for a window after); `backlog`: it waits. */
    shortAt: 0,
    backlog: false,
    /** Requesters granted a permit in the window, with their last grant: they share the spare. */
    requesters: [] as [string, number][],
    refusals: 0,
    granted: 0,
  };
}

/** The previous version's snapshot (grants as bare times), read once, at its continue-as-new onto this one. */
type PreviousSnapshot = Omit<LedgerSnapshot, 'log'> & {
  grants: number[];
  cautiousUntil?: number;
  recent?: string[];
};

function upgraded(snapshot: LedgerSnapshot | PreviousSnapshot): LedgerSnapshot {
  if ('log' in snapshot) return snapshot;
  const { grants, cautiousUntil, recent: _recent, ...kept } = snapshot;
  return {
    ...emptyLedger(snapshot.budget),
    ...kept,
    log: grants.map((at, i) => ({ permitId: `previous-${i}`, at, count: 1 })),
    spreadUntil: cautiousUntil ?? 0,
  };
}
