import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PermitRequest, RateBudget } from '../../../src/contract/budget';
import { BudgetLedger } from '../../../src/workflows/budget/ledger';

const BUDGET: RateBudget = { requests: 3, windowMs: 10_000 };
// The window padded by 2% (at least 1 s, at most 5 s) for the delay between a grant and its request.
const PADDED = 11_000;
const T0 = 1_000_000;

let ids = 0;
function ask(projectId: string, extra: Partial<PermitRequest> = {}): PermitRequest {
  ids += 1;
  return {
    permitId: `p${ids}`,
    requesterId: `wf-${ids}`,
    projectId,
    requestedAt: T0,
    budget: BUDGET,
    ...extra,
  };
}

/** Every permit the ledger grants at `now`, as "project:permit". */
function drain(ledger: BudgetLedger, now: number): string[] {
  const granted: string[] = [];
  for (let next = ledger.grant(now); next; next = ledger.grant(now))
    granted.push(`${next.projectId}:${next.permitId}`);
  return granted;
}

describe('BudgetLedger', () => {
  test('a quiet budget grants a whole window at once, then one more each time a grant leaves the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 5 }, () => ask('a'));
    for (const request of asks) ledger.enqueue(request, T0);
    assert.equal(drain(ledger, T0).length, 3);
    assert.equal(ledger.wakeAt(T0), T0 + PADDED);
    assert.deepEqual(drain(ledger, T0 + PADDED - 1), []);
    assert.equal(drain(ledger, T0 + PADDED).length, 2, 'the three grants of T0 left the window together');
    assert.equal(ledger.wakeAt(T0 + PADDED), undefined, 'nobody waits');
  });

  test('round robin across projects: a long export does not hold up a one-page day', () => {
    const ledger = new BudgetLedger({ requests: 100, windowMs: 10_000 });
    for (let i = 0; i < 6; i++) ledger.enqueue(ask('big'), T0);
    ledger.enqueue(ask('small'), T0);
    const order = drain(ledger, T0).map((g) => g.split(':')[0]);
    assert.deepEqual(order.slice(0, 2), ['big', 'small']);
  });

  test('FIFO within a project by requestedAt, then arrival; a repeated ask is not granted twice', () => {
    const ledger = new BudgetLedger(BUDGET);
    const late = ask('p', { requestedAt: T0 + 5 });
    const early = ask('p', { requestedAt: T0 + 1 });
    ledger.enqueue(late, T0);
    ledger.enqueue(early, T0);
    assert.equal(ledger.enqueue(early, T0), undefined, 'a repeat while waiting');
    assert.deepEqual(drain(ledger, T0), [`p:${early.permitId}`, `p:${late.permitId}`]);
    assert.equal(ledger.enqueue(early, T0), undefined, 'a repeat after the grant');
    assert.deepEqual(drain(ledger, T0), []);
  });

  test('a 429 with Retry-After pauses everyone; without, the pause doubles from 2 s up to the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    ledger.enqueue(ask('a', { refusal: { grantedAt: T0 - 1, retryAfterMs: 7_000 } }), T0);
    assert.deepEqual(drain(ledger, T0), []);
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

  test('refusals of requests sent before the pause began do not lengthen the backoff', () => {
    const ledger = new BudgetLedger(BUDGET);
    ledger.enqueue(ask('a', { refusal: { grantedAt: T0 - 10 } }), T0);
    ledger.enqueue(ask('b', { refusal: { grantedAt: T0 - 5 } }), T0 + 100);
    assert.equal(ledger.wakeAt(T0 + 100), T0 + 2_000, 'still the first 2 s pause');
  });

  test('exclusive permits go one at a time until released (or the hold times out)', () => {
    const ledger = new BudgetLedger(BUDGET);
    const first = ask('p', { exclusive: true });
    const second = ask('p', { exclusive: true });
    ledger.enqueue(first, T0);
    ledger.enqueue(second, T0);
    assert.deepEqual(drain(ledger, T0), [`p:${first.permitId}`]);
    assert.equal(ledger.wakeAt(T0), T0 + 90_000, 'the hold timeout');
    ledger.release(first.permitId, T0 + 5);
    assert.deepEqual(drain(ledger, T0 + 10), [`p:${second.permitId}`]);
  });

  test('a permit settles after its request: one requested earlier but slower to ask goes first', () => {
    const ledger = new BudgetLedger(BUDGET);
    const earlier = ask('p', { exclusive: true, requestedAt: T0, settleMs: 300 });
    const later = ask('p', { exclusive: true, requestedAt: T0 + 20, settleMs: 300 });
    ledger.enqueue(later, T0 + 50);
    assert.deepEqual(drain(ledger, T0 + 50), [], 'the later one settles first');
    assert.equal(ledger.wakeAt(T0 + 50), T0 + 320);
    ledger.enqueue(earlier, T0 + 150);
    assert.equal(ledger.wakeAt(T0 + 150), T0 + 300);
    assert.deepEqual(drain(ledger, T0 + 300), [`p:${earlier.permitId}`]);
    ledger.release(earlier.permitId, T0 + 310);
    assert.deepEqual(drain(ledger, T0 + 320), [`p:${later.permitId}`]);
  });

  test("an exclusive permit's place in the window counts from its release: its request landed by then", () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 4 }, () => ask('p', { exclusive: true }));
    for (const request of asks) ledger.enqueue(request, T0);
    // The first request took 1.5 s to land (a loaded worker): the fourth waits a window after that.
    assert.deepEqual(drain(ledger, T0), [`p:${asks[0]?.permitId ?? ''}`]);
    ledger.release(asks[0]?.permitId ?? '', T0 + 1_500);
    assert.deepEqual(drain(ledger, T0 + 1_600), [`p:${asks[1]?.permitId ?? ''}`]);
    ledger.release(asks[1]?.permitId ?? '', T0 + 1_700);
    assert.deepEqual(drain(ledger, T0 + 1_800), [`p:${asks[2]?.permitId ?? ''}`]);
    ledger.release(asks[2]?.permitId ?? '', T0 + 1_900);
    assert.equal(ledger.wakeAt(T0 + 1_900), T0 + 1_500 + PADDED, 'not T0 + PADDED');
    assert.deepEqual(drain(ledger, T0 + PADDED), []);
    assert.deepEqual(drain(ledger, T0 + 1_500 + PADDED), [`p:${asks[3]?.permitId ?? ''}`]);
  });

  test('a permit released before its grant is withdrawn: never granted, not even when its ask comes again', () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 5 }, () => ask('a'));
    for (const request of asks) ledger.enqueue(request, T0);
    assert.equal(drain(ledger, T0).length, 3);
    const [, , , withdrawn, next] = asks;
    assert.ok(withdrawn && next);
    ledger.release(withdrawn.permitId, T0 + 1);
    assert.deepEqual(ledger.queuedRequesters(), [next.requesterId]);
    assert.equal(ledger.enqueue(withdrawn, T0 + 2), undefined, 'an ask still on its way is ignored');
    assert.deepEqual(drain(ledger, T0 + PADDED), [`a:${next.permitId}`]);
    assert.deepEqual(ledger.view(T0 + PADDED).waitingByProject, {});
  });

  test('a grant the requester never received frees its place; the snapshot carries everything', () => {
    const ledger = new BudgetLedger(BUDGET);
    const asks = Array.from({ length: 4 }, () => ask('a'));
    for (const request of asks) ledger.enqueue(request, T0);
    drain(ledger, T0);
    ledger.forget(asks[0]?.permitId ?? '', T0);
    const restored = new BudgetLedger(BUDGET, ledger.snapshot());
    assert.deepEqual(drain(restored, T0 + 1), [`a:${asks[3]?.permitId ?? ''}`]);
    assert.deepEqual(restored.view(T0 + 1).waitingByProject, {});
    assert.equal(restored.view(T0 + 1).granted, 4);
  });

  test('the estimate counts the permits waiting ahead against the window', () => {
    const ledger = new BudgetLedger(BUDGET);
    for (let i = 0; i < 3; i++) ledger.enqueue(ask('a'), T0);
    drain(ledger, T0);
    const ticket = ledger.enqueue(ask('b'), T0 + 1_000);
    assert.equal(ticket?.estimatedGrantAt, T0 + PADDED);
    assert.equal(ticket?.waitingAhead, 0);
  });

  test('a request with a count takes extras only from its share of the spare, and hears the spare', () => {
    const big = { requests: 100, windowMs: 10_000 };
    const ledger = new BudgetLedger(big);
    const first = ask('a', { count: 30, budget: big });
    ledger.enqueue(first, T0);
    assert.equal(ledger.grant(T0)?.permitId, first.permitId);
    assert.equal(ledger.grantExtras(first, T0), 29, 'nobody else: 99 free, no reserve held back');
    assert.equal(ledger.spare(T0), 70);

    // A second requester shares what is left: 69 among two, 34 each.
    const second = ask('b', { count: 64, budget: big });
    ledger.enqueue(second, T0 + 1);
    assert.equal(ledger.grant(T0 + 1)?.permitId, second.permitId);
    assert.equal(ledger.grantExtras(second, T0 + 1), 34);
    assert.equal(ledger.view(T0 + 1).grantedInWindow, 65);

    // Another requester waiting: no extras, whatever the spare.
    const third = ask('c', { count: 10, budget: big });
    const fourth = ask('d', { budget: big });
    ledger.enqueue(third, T0 + 2);
    ledger.enqueue(fourth, T0 + 2);
    assert.equal(ledger.grant(T0 + 2)?.permitId, third.permitId);
    assert.equal(ledger.grantExtras(third, T0 + 2), 0);
  });

  test('a budget that ran short binds for a window: spare 0 and no extras; a plain request gets no extras', () => {
    const ledger = new BudgetLedger(BUDGET);
    for (let i = 0; i < 4; i++) ledger.enqueue(ask('a', { count: 1 }), T0);
    assert.equal(drain(ledger, T0).length, 3, 'the fourth waits: the budget ran short');
    const later = T0 + PADDED;
    assert.equal(drain(ledger, later).length, 1);
    assert.equal(ledger.spare(later), 0, 'short within the last window');
    const batch = ask('a', { count: 3 });
    ledger.enqueue(batch, later + 1);
    assert.equal(ledger.grant(later + 1)?.permitId, batch.permitId);
    assert.equal(ledger.grantExtras(batch, later + 1), 0);
    assert.equal(ledger.spare(later + 1 + PADDED), 3, 'a window later: all 3 free');

    const plain = ask('b');
    const quiet = new BudgetLedger(BUDGET);
    quiet.enqueue(plain, T0);
    assert.equal(quiet.grant(T0)?.permitId, plain.permitId);
    assert.equal(quiet.grantExtras(plain, T0), 0);
  });

  test('permits given back free their places in the window, once per return', () => {
    const big = { requests: 100, windowMs: 10_000 };
    const ledger = new BudgetLedger(big);
    const batch = ask('a', { count: 40, budget: big });
    ledger.enqueue(batch, T0);
    ledger.grant(T0);
    assert.equal(ledger.grantExtras(batch, T0), 39);
    assert.equal(ledger.view(T0).grantedInWindow, 40);
    const release = { releaseId: 'r1', unspent: [{ grantedAt: T0, count: 25 }] };
    ledger.releaseUnspent(release);
    assert.equal(ledger.view(T0).grantedInWindow, 15);
    assert.equal(ledger.view(T0).granted, 15);
    ledger.releaseUnspent(release);
    assert.equal(ledger.view(T0).grantedInWindow, 15, 'a repeated release counts once');
    ledger.releaseUnspent({ releaseId: 'r2', unspent: [{ grantedAt: T0 + 5, count: 3 }] });
    assert.equal(ledger.view(T0).grantedInWindow, 15, 'nothing was granted then: nothing to free');
  });

  test('an hour is padded by 5 s: a permit may be held 4.75 s', () => {
    const hour = { requests: 2, windowMs: 3_600_000 };
    const ledger = new BudgetLedger(hour);
    assert.equal(ledger.spendWithinMs, 4_750);
    for (let i = 0; i < 3; i++) ledger.enqueue(ask('a', { budget: hour }), T0);
    assert.equal(drain(ledger, T0).length, 2);
    assert.equal(ledger.wakeAt(T0), T0 + 3_605_000);
  });
});
