import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PermitAsk, PermitRelease, RateBudget } from '../../../src/contract/budget';
import { BudgetLedger, type LedgerSnapshot } from '../../../src/workflows/budget/ledger';

const BUDGET: RateBudget = { requests: 3, windowMs: 10_000 };
// Padded by 2 s: a batch's permits keep 1.75 s, long enough for a stock of them.
const BIG: RateBudget = { requests: 100, windowMs: 100_000 };
// The window padded by 2% (at least 1 s, at most 5 s) for the delay between a grant and its request.
const PADDED = 11_000;
const T0 = 1_000_000;

let ids = 0;
function ask(projectId: string, extra: Partial<PermitAsk> = {}): PermitAsk {
  ids += 1;
  return {
    permitId: `p${ids}`,
    requesterId: `wf-${ids}`,
    requesterRunId: `run-${ids}`,
    projectId,
    budget: BUDGET,
    count: 1,
    ...extra,
  };
}

/** Every permit the ledger grants at `now`, as "project:permit". */
function drain(ledger: BudgetLedger, now: number): string[] {
  const granted: string[] = [];
  for (let next = ledger.grant(now); next; next = ledger.grant(now))
    granted.push(`${next.ask.projectId}:${next.ask.permitId}`);
  return granted;
}

function enqueueAll(ledger: BudgetLedger, asks: PermitAsk[], now: number, budget = BUDGET): void {
  for (const request of asks) ledger.enqueue({ ...request, budget }, now);
}

describe('BudgetLedger', () => {
  test('a quiet budget grants a whole window at once, then one more each time a grant leaves the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    enqueueAll(
      ledger,
      Array.from({ length: 5 }, () => ask('a')),
      T0,
    );
    assert.equal(drain(ledger, T0).length, 3);
    assert.equal(ledger.wakeAt(T0), T0 + PADDED);
    assert.deepEqual(drain(ledger, T0 + PADDED - 1), []);
    assert.equal(drain(ledger, T0 + PADDED).length, 2, 'the three grants of T0 left the window together');
    assert.equal(ledger.wakeAt(T0 + PADDED), undefined, 'nobody waits');
  });

  test('round robin across projects: a long export does not hold up a one-page day', () => {
    const ledger = new BudgetLedger(BIG);
    enqueueAll(ledger, [...Array.from({ length: 6 }, () => ask('big')), ask('small')], T0, BIG);
    const order = drain(ledger, T0).map((g) => g.split(':')[0]);
    assert.deepEqual(order.slice(0, 2), ['big', 'small']);
  });

  test('FIFO within a project in the order received; a repeated ask is not granted twice', () => {
    const ledger = new BudgetLedger(BUDGET);
    const [first, second] = [ask('p'), ask('p')] as const;
    ledger.enqueue(first, T0);
    ledger.enqueue(second, T0);
    assert.equal(ledger.enqueue(first, T0), undefined, 'a repeat while waiting');
    assert.deepEqual(drain(ledger, T0), [`p:${first.permitId}`, `p:${second.permitId}`]);
    assert.equal(ledger.enqueue(first, T0 + 1), undefined, 'a repeat after the grant');
    assert.deepEqual(drain(ledger, T0 + 1), []);
  });

  test('a 429 with Retry-After pauses everyone; without, the pause doubles from 2 s up to the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    ledger.enqueue(ask('a', { refusal: { grantedAt: T0 - 1, retryAfterMs: 7_000 } }), T0);
    assert.deepEqual(drain(ledger, T0), []);
    assert.equal(ledger.view(T0).pausedUntil, T0 + 7_000);
    assert.equal(ledger.wakeAt(T0), T0 + 7_000);
    assert.equal(drain(ledger, T0 + 7_000).length, 1);

    const bare = new BudgetLedger(BUDGET);
    const pauses: number[] = [];
    let now = T0;
    for (let i = 0; i < 5; i++) {
      bare.enqueue(ask('a', { refusal: { grantedAt: now } }), now);
      const wake = bare.wakeAt(now) ?? now;
      pauses.push(wake - now);
      now = wake;
      assert.equal(drain(bare, now).length, 1);
    }
    assert.deepEqual(pauses, [2_000, 4_000, 8_000, 10_000, 10_000]);
  });

  test('refusals of requests sent before the pause began do not lengthen it; grants are spread after it', () => {
    const ledger = new BudgetLedger(BIG);
    ledger.enqueue(ask('a', { refusal: { grantedAt: T0 - 10 }, budget: BIG }), T0);
    ledger.enqueue(ask('b', { refusal: { grantedAt: T0 - 5 }, budget: BIG }), T0 + 100);
    assert.equal(ledger.wakeAt(T0 + 100), T0 + 2_000, 'still the first 2 s pause');
    enqueueAll(ledger, [ask('c'), ask('d')], T0 + 100, BIG);
    const grants = [T0 + 2_000, T0 + 3_000, T0 + 3_500, T0 + 4_000].map((at) => drain(ledger, at).length);
    assert.deepEqual(grants, [1, 1, 0, 1], 'one per window / requests (1 s), not all at once');
  });

  test('exclusive permits go one at a time until released (or the hold times out)', () => {
    const ledger = new BudgetLedger(BUDGET);
    const [first, second] = [ask('p', { exclusive: true }), ask('p', { exclusive: true })] as const;
    enqueueAll(ledger, [first, second], T0);
    assert.deepEqual(drain(ledger, T0), [`p:${first.permitId}`]);
    assert.equal(ledger.wakeAt(T0), T0 + 90_000, 'the hold timeout');
    ledger.release({ permitId: first.permitId }, T0 + 5);
    assert.deepEqual(drain(ledger, T0 + 10), [`p:${second.permitId}`]);
  });

  test("an exclusive permit's place in the window counts from its release: its request landed by then", () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 4 }, () => ask('p', { exclusive: true }));
    const id = (i: number) => asks[i]?.permitId ?? '';
    enqueueAll(ledger, asks, T0);
    // The first request took 1.5 s to land (a loaded worker): the fourth waits a window after that.
    assert.deepEqual(drain(ledger, T0), [`p:${id(0)}`]);
    ledger.release({ permitId: id(0) }, T0 + 1_500);
    assert.deepEqual(drain(ledger, T0 + 1_600), [`p:${id(1)}`]);
    ledger.release({ permitId: id(1) }, T0 + 1_700);
    assert.deepEqual(drain(ledger, T0 + 1_800), [`p:${id(2)}`]);
    ledger.release({ permitId: id(2) }, T0 + 1_900);
    ledger.release({ permitId: id(0) }, T0 + 5_000);
    assert.equal(
      ledger.wakeAt(T0 + 1_900),
      T0 + 1_500 + PADDED,
      'not T0 + PADDED; a repeated release moves nothing',
    );
    assert.deepEqual(drain(ledger, T0 + PADDED), []);
    assert.deepEqual(drain(ledger, T0 + 1_500 + PADDED), [`p:${id(3)}`]);
  });

  test('a permit released before its grant is withdrawn: never granted, not even when its ask comes again', () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 5 }, () => ask('a'));
    enqueueAll(ledger, asks, T0);
    assert.equal(drain(ledger, T0).length, 3);
    const [, , , withdrawn, next] = asks;
    assert.ok(withdrawn && next);
    ledger.release({ permitId: withdrawn.permitId }, T0 + 1);
    assert.deepEqual(ledger.queuedRequesters(), [next.requesterId]);
    assert.equal(ledger.enqueue(withdrawn, T0 + 2), undefined, 'an ask still on its way is ignored');
    const early = ask('a');
    ledger.release({ permitId: early.permitId }, T0 + 3);
    assert.equal(ledger.enqueue(early, T0 + 4), undefined, 'released before its ask arrived');
    assert.deepEqual(drain(ledger, T0 + PADDED), [`a:${next.permitId}`]);
    assert.deepEqual(ledger.view(T0 + PADDED).waitingByProject, {});
  });

  test('a grant given back whole (its requester had ended) frees its places; the snapshot carries everything', () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 4 }, () => ask('a'));
    enqueueAll(ledger, asks, T0);
    drain(ledger, T0);
    ledger.release({ permitId: asks[0]?.permitId ?? '', unused: 1 }, T0);
    const restored = new BudgetLedger(BUDGET, ledger.snapshot());
    assert.deepEqual(drain(restored, T0 + 1), [`a:${asks[3]?.permitId ?? ''}`]);
    assert.deepEqual(restored.view(T0 + 1).waitingByProject, {});
    assert.equal(restored.view(T0 + 1).granted, 3, 'four granted, one given back');
  });

  test('the estimate counts the permits waiting ahead against the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    enqueueAll(ledger, [ask('a'), ask('a'), ask('a')], T0);
    drain(ledger, T0);
    assert.equal(ledger.enqueue(ask('b'), T0 + 1_000), T0 + PADDED);
    assert.equal(ledger.enqueue(ask('b'), T0 + 1_000), T0 + PADDED, 'the second of the next window');
    assert.equal(ledger.enqueue(ask('b'), T0 + 1_000), T0 + PADDED);
    assert.equal(ledger.enqueue(ask('b'), T0 + 1_000), T0 + 2 * PADDED, 'a window later');
  });

  test('an ask with a count takes extras only from its share of the spare, and hears the spare', () => {
    const ledger = new BudgetLedger(BIG);
    ledger.enqueue(ask('a', { count: 30, budget: BIG }), T0);
    const first = ledger.grant(T0)?.grant;
    assert.equal(first?.count, 30, 'nobody else: 99 free, no reserve held back');
    assert.equal(first?.spare, 70);

    // A second requester shares what is left: 69 among two, 34 each.
    ledger.enqueue(ask('b', { count: 64, budget: BIG }), T0 + 1);
    assert.equal(ledger.grant(T0 + 1)?.grant.count, 35);
    assert.equal(ledger.view(T0 + 1).grantedInWindow, 65);

    // Another requester waiting: no extras, whatever the spare.
    enqueueAll(ledger, [ask('c', { count: 10 }), ask('d')], T0 + 2, BIG);
    assert.equal(ledger.grant(T0 + 2)?.grant.count, 1);
    // Exclusive: never extras.
    ledger.enqueue(ask('e', { count: 10, exclusive: true, budget: BIG }), T0 + 3);
    drain(ledger, T0 + 3);
    assert.equal(ledger.view(T0 + 3).grantedInWindow, 68);
  });

  test('a budget that ran short binds for a window: spare 0 and no extras', () => {
    const three = { requests: 3, windowMs: 100_000 };
    const padded = 102_000;
    const ledger = new BudgetLedger(three);
    enqueueAll(
      ledger,
      Array.from({ length: 4 }, () => ask('a')),
      T0,
      three,
    );
    assert.equal(drain(ledger, T0).length, 3, 'the fourth waits: the budget ran short');
    const later = T0 + padded;
    assert.equal(ledger.grant(later)?.grant.spare, 0, 'short within the last window');
    ledger.enqueue(ask('a', { count: 3, budget: three }), later + 1);
    assert.equal(ledger.grant(later + 1)?.grant.count, 1);
    ledger.enqueue(ask('a', { count: 3, budget: three }), later + 1 + padded);
    assert.equal(ledger.grant(later + 1 + padded)?.grant.count, 3, 'a window later: all 3 free');
  });

  test('a padding too short to hold permits (1 s of a 10 s window) leaves no spare: one permit an ask', () => {
    const ledger = new BudgetLedger(BUDGET);
    const batch = ask('a', { count: 3 });
    ledger.enqueue(batch, T0);
    assert.deepEqual(ledger.grant(T0)?.grant, {
      permitId: batch.permitId,
      grantedAt: T0,
      count: 1,
      spare: 0,
      spendBy: T0 + 750,
    });
  });

  test('unspent permits given back free their places in the window, once per permit', () => {
    const ledger = new BudgetLedger(BIG);
    const batch = ask('a', { count: 40, budget: BIG });
    ledger.enqueue(batch, T0);
    assert.equal(ledger.grant(T0)?.grant.count, 40);
    ledger.release({ permitId: batch.permitId, unused: 25 }, T0);
    assert.equal(ledger.view(T0).grantedInWindow, 15);
    assert.equal(ledger.view(T0).granted, 15);
    ledger.release({ permitId: batch.permitId, unused: 25 }, T0);
    assert.equal(ledger.view(T0).grantedInWindow, 15, 'a repeated release counts once');
  });

  test('an hour is padded by 5 s: a permit may be held 4.75 s', () => {
    const hour = { requests: 2, windowMs: 3_600_000 };
    const ledger = new BudgetLedger(hour);
    enqueueAll(ledger, [ask('a'), ask('a'), ask('a')], T0, hour);
    assert.equal(ledger.grant(T0)?.grant.spendBy, T0 + 4_750);
    assert.equal(drain(ledger, T0).length, 1);
    assert.equal(ledger.wakeAt(T0), T0 + 3_605_000);
  });

  test("the previous version's snapshot (grants as times) is read at its continue-as-new onto this one", () => {
    const waiting = ask('a');
    const previous = {
      budget: BUDGET,
      grants: [T0, T0, T0 + 5],
      queues: [['a', [{ ...waiting, count: undefined, requestedAt: T0 }]]],
      pausedUntil: 0,
      pauseStartedAt: 0,
      streak: 0,
      lastRefusalAt: 0,
      cautiousUntil: 0,
      exclusive: null,
      refusals: 1,
      granted: 9,
      recent: ['p0'],
    } as unknown as LedgerSnapshot;
    const ledger = new BudgetLedger(BUDGET, previous);
    assert.deepEqual(ledger.view(T0 + 10), {
      budget: BUDGET,
      grantedInWindow: 3,
      waitingByProject: { a: 1 },
      pausedUntil: null,
      refusals: 1,
      granted: 9,
    });
    assert.deepEqual(drain(ledger, T0 + PADDED - 1), [], 'the three grants are in the window');
    assert.deepEqual(drain(ledger, T0 + PADDED), [`a:${waiting.permitId}`]);
  });

  test('messages of the previous version: an ask without a count is one permit; unspent by grant time stays counted', () => {
    const ledger = new BudgetLedger(BIG);
    const { count: _count, ...previousAsk } = ask('a', { budget: BIG, exclusive: true });
    ledger.enqueue(previousAsk, T0);
    assert.equal(ledger.grant(T0)?.grant.count, 1);
    const previousRelease = { permitId: previousAsk.permitId, unspent: [{ grantedAt: T0, count: 1 }] };
    ledger.release(previousRelease, T0 + 5);
    ledger.release({ releaseId: 'r1', unspent: [] } as unknown as PermitRelease, T0 + 5);
    assert.equal(ledger.view(T0 + 5).grantedInWindow, 1);
    ledger.enqueue(ask('a', { budget: BIG, exclusive: true }), T0 + 6);
    assert.equal(drain(ledger, T0 + 6).length, 1, 'the exclusive permit was released');
  });
});
