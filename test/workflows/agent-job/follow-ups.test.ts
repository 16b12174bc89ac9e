import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  FOLLOW_UP_LIMITS,
  messageIdKey,
  sentFollowUpsSchema,
  type AgentJob,
} from '../../../src/contract/agent-job';
import {
  FollowUpQueue,
  type FollowUpQueueSnapshot,
  type FollowUpWaiter,
} from '../../../src/workflows/agent-job/state';

const JOB: AgentJob = { id: 'job_1', status: 'active', prLink: null };

/** One follow-up through the loop's steps: queued, sent, delivered. */
function send(queue: FollowUpQueue, messageId: string): void {
  queue.enqueue(messageId, `Follow-up ${messageId}`);
  queue.sendingHead();
  queue.deliverHead(JOB);
}

/** A waiter that remembers how its follow-up ended, as an update handler would learn it. */
function recordingWaiter(): FollowUpWaiter & { outcome: string[] } {
  const outcome: string[] = [];
  return {
    outcome,
    delivered: (job) => outcome.push(`delivered to ${job.id}`),
    failed: (status, reason) => outcome.push(`${status}: ${reason}`),
  };
}

describe('FollowUpQueue', () => {
  test('sends in arrival order; each settled follow-up is recorded with its status', () => {
    const queue = new FollowUpQueue();
    queue.enqueue('a', 'First');
    queue.enqueue('b', 'Second');
    queue.enqueue('c', 'Third');
    assert.deepEqual(queue.head(), { messageId: 'a', prompt: 'First' });

    queue.deliverHead(JOB);
    queue.failHead('rejected', 'HTTP 409');
    assert.deepEqual(queue.head(), { messageId: 'c', prompt: 'Third' });
    assert.deepEqual(queue.records(), [
      { messageId: 'a', prompt: 'First', status: 'delivered' },
      { messageId: 'b', prompt: 'Second', status: 'rejected', error: 'HTTP 409' },
      { messageId: 'c', prompt: 'Third', status: 'pending' },
    ]);
    assert.equal(queue.statusOf('a'), 'delivered');
    assert.equal(queue.statusOf('b'), undefined, 'refused: it may come again');
    assert.equal(queue.statusOf('c'), 'pending');
    assert.equal(queue.statusOf('never-seen'), undefined);
  });

  test('waiters learn the fate of their own follow-up only', () => {
    const queue = new FollowUpQueue();
    const first = recordingWaiter();
    const second = recordingWaiter();
    queue.enqueue('a', 'First', first);
    queue.enqueue('b', 'Second', second);
    queue.deliverHead(JOB);
    assert.deepEqual(first.outcome, ['delivered to job_1']);
    assert.deepEqual(second.outcome, []);
    queue.failHead('outcome_unknown', 'HTTP 502 after sending');
    assert.deepEqual(second.outcome, ['outcome_unknown: HTTP 502 after sending']);
  });

  test('rejectAll settles every queued follow-up as rejected without sending it', () => {
    const queue = new FollowUpQueue();
    const waiter = recordingWaiter();
    queue.enqueue('a', 'First', waiter);
    queue.enqueue('b', 'Second');
    queue.rejectAll('the job failed');
    assert.equal(queue.pendingCount, 0);
    assert.equal(queue.head(), undefined);
    assert.deepEqual(
      queue.records().map((r) => `${r.messageId} ${r.status} ${r.error ?? ''}`),
      ['a rejected the job failed', 'b rejected the job failed'],
    );
    assert.deepEqual(waiter.outcome, ['rejected: the job failed']);
  });

  test('abandon fails waiting updates as not_sent; queued follow-ups stay listed as pending', () => {
    const queue = new FollowUpQueue();
    const waiter = recordingWaiter();
    queue.enqueue('a', 'First', waiter);
    queue.abandon('the workflow is ending');
    assert.deepEqual(waiter.outcome, ['not_sent: the workflow is ending']);
    assert.deepEqual(queue.records(), [{ messageId: 'a', prompt: 'First', status: 'pending' }]);
    assert.deepEqual(queue.snapshot().pendingFollowUps, [{ messageId: 'a', prompt: 'First' }]);
  });

  test('is full at maxPending; a refused follow-up is listed as rejected, and taken once the queue has room', () => {
    const queue = new FollowUpQueue();
    for (let i = 0; i < FOLLOW_UP_LIMITS.maxPending; i++) {
      assert.equal(queue.refusal('job_1'), undefined);
      queue.enqueue(`m${i}`, 'x');
    }
    assert.match(queue.refusal('job_1') ?? '', /^20 follow-ups are already waiting to be sent/);
    queue.recordNotAccepted('late', 'y', 'the queue is full');
    assert.equal(queue.pendingCount, FOLLOW_UP_LIMITS.maxPending);
    assert.equal(queue.statusOf('late'), undefined);
    assert.deepEqual(queue.records()[0], {
      messageId: 'late',
      prompt: 'y',
      status: 'rejected',
      error: 'the queue is full',
    });

    queue.deliverHead(JOB);
    queue.enqueue('late', 'y');
    assert.equal(queue.statusOf('late'), 'pending');
    assert.deepEqual(
      queue.records().filter((r) => r.messageId === 'late'),
      [{ messageId: 'late', prompt: 'y', status: 'pending' }],
      'listed once, as it stands now',
    );
  });

  test('a messageId sent is never forgotten, however many follow-ups (refused ones too) came after it', () => {
    const queue = new FollowUpQueue();
    send(queue, 'first');
    for (let i = 0; i < 530; i++) queue.recordNotAccepted(`refused-${i}`, 'x', 'the queue is full');
    for (let i = 0; i < 530; i++) send(queue, `other-${i}`);
    assert.ok(!queue.records().some((r) => r.messageId === 'first'), 'no longer listed');
    assert.equal(queue.statusOf('first'), 'delivered');
    const next = new FollowUpQueue(JSON.parse(JSON.stringify(queue.snapshot())) as FollowUpQueueSnapshot);
    assert.equal(next.statusOf('first'), 'delivered', 'nor in the next run');
    assert.equal(next.statusOf('refused-3'), undefined);
  });

  test('the head is in the ledger from its send; a 4xx or a send not taken (429, 503) takes it out', () => {
    const queue = new FollowUpQueue();
    queue.enqueue('a', 'First');
    queue.enqueue('b', 'Second');
    queue.sendingHead();
    assert.deepEqual(queue.sent(), { delivered: [], outcomeUnknown: [messageIdKey('a')] }, 'in flight');
    queue.sendingHead(false);
    assert.deepEqual(
      queue.sent(),
      { delivered: [], outcomeUnknown: [] },
      'not taken: waits to be sent again',
    );
    queue.sendingHead();
    queue.failHead('rejected', 'HTTP 422');
    queue.sendingHead();
    queue.failHead('outcome_unknown', 'HTTP 502 after sending');
    assert.deepEqual(queue.sent(), { delivered: [], outcomeUnknown: [messageIdKey('b')] });
    assert.equal(queue.statusOf('a'), undefined, 'refused by the service: may be sent again');
    assert.equal(queue.statusOf('b'), 'outcome_unknown');
  });

  test(`a job takes ${FOLLOW_UP_LIMITS.maxPerJob} follow-ups; past that it refuses, saying so; the ledger stays small`, () => {
    const queue = new FollowUpQueue();
    for (let i = 0; i < FOLLOW_UP_LIMITS.maxPerJob - 1; i++) send(queue, `m${i}`);
    assert.equal(queue.refusal('job_1'), undefined);
    queue.enqueue('last', 'x');
    assert.equal(
      queue.refusal('job_1'),
      `job job_1 has taken ${FOLLOW_UP_LIMITS.maxPerJob} follow-ups, the most one job takes; start a new job`,
    );
    const bytes = JSON.stringify(queue.sent()).length;
    assert.ok(bytes < 200_000, `the ledger of ${FOLLOW_UP_LIMITS.maxPerJob} ids: ${bytes} bytes`);
    assert.ok(sentFollowUpsSchema.safeParse(queue.sent()).success);
  });

  test("an earlier run's ledger, learned later: its ids are not sent again, also one already queued", () => {
    const queue = new FollowUpQueue();
    const failed: string[] = [];
    queue.enqueue('a', 'sent by the earlier run', {
      delivered: () => assert.fail('not delivered'),
      failed: (status, reason) => failed.push(`${status}: ${reason}`),
    });
    queue.enqueue('new', 'a new one');
    queue.addEarlier({
      followUps: [{ messageId: 'a', prompt: 'sent by the earlier run', status: 'delivered' }],
      sentFollowUps: { delivered: [messageIdKey('a')], outcomeUnknown: [] },
    });
    assert.deepEqual(queue.head(), { messageId: 'new', prompt: 'a new one' });
    assert.equal(queue.statusOf('a'), 'delivered');
    assert.deepEqual(failed, ['not_sent: already sent by an earlier run of this workflow id (delivered)']);
    assert.deepEqual(
      queue.records().map((r) => [r.messageId, r.status]),
      [
        ['a', 'delivered'],
        ['new', 'pending'],
      ],
    );
  });

  test("unnamed follow-ups queued before the earlier runs' ledger came take ids those runs did not use", () => {
    const queue = new FollowUpQueue();
    queue.enqueueUnnamed('first of this run');
    queue.enqueueUnnamed('second of this run');
    queue.addEarlier({
      followUps: [{ messageId: 'followup-1', prompt: 'the earlier run', status: 'delivered' }],
      sentFollowUps: {
        delivered: [messageIdKey('followup-1'), messageIdKey('followup-3')],
        outcomeUnknown: [],
      },
    });
    assert.deepEqual(
      queue.records().map((r) => [r.messageId, r.prompt, r.status]),
      [
        ['followup-1', 'the earlier run', 'delivered'],
        ['followup-4', 'first of this run', 'pending'],
        ['followup-2', 'second of this run', 'pending'],
      ],
      'none dropped, none under an id the service may have',
    );
    assert.equal(queue.nextUnnamedId(), 'followup-5');
    const next = new FollowUpQueue(queue.snapshot());
    assert.equal(next.snapshot().pendingFollowUps[0]?.unnamed, true, 'still renamed if learned again');
  });

  test(`an earlier runs' ledger that fills the job's ${FOLLOW_UP_LIMITS.maxPerJob}: what passes it is refused, saying so`, () => {
    const keys = Array.from({ length: FOLLOW_UP_LIMITS.maxPerJob - 1 }, (_, i) => messageIdKey(`old${i}`));
    const queue = new FollowUpQueue();
    const waiter = recordingWaiter();
    queue.enqueue('fits', 'x');
    queue.enqueue('past', 'y', waiter);
    queue.addEarlier({ followUps: [], sentFollowUps: { delivered: keys, outcomeUnknown: [] } });
    assert.equal(queue.pendingCount, 1);
    assert.equal(queue.head()?.messageId, 'fits');
    assert.deepEqual(waiter.outcome, [
      `not_sent: job (not created yet) has taken ${FOLLOW_UP_LIMITS.maxPerJob} follow-ups, the most one job takes; start a new job`,
    ]);
    assert.equal(queue.records().find((r) => r.messageId === 'past')?.status, 'rejected');
    assert.ok(sentFollowUpsSchema.safeParse(queue.sent()).success, 'a continue-as-new still carries it');
  });

  test('messageIdKey is FNV-1a 64, 16 hex digits', () => {
    assert.equal(messageIdKey(''), 'cbf29ce484222325');
    assert.equal(messageIdKey('a'), 'af63dc4c8601ec8c');
    assert.equal(messageIdKey('foobar'), '85944171f73967e8');
  });

  test('records keep a shortened prompt; the queue keeps the whole one to send', () => {
    const queue = new FollowUpQueue();
    const long = 'p'.repeat(FOLLOW_UP_LIMITS.recordPromptChars + 50);
    queue.enqueue('a', long);
    assert.equal(queue.head()?.prompt, long);
    const [pending] = queue.records();
    assert.equal(pending?.prompt.length, FOLLOW_UP_LIMITS.recordPromptChars);
    assert.ok(pending?.prompt.endsWith('…'));
    queue.deliverHead(JOB);
    assert.equal(queue.records()[0]?.prompt.length, FOLLOW_UP_LIMITS.recordPromptChars);
  });

  test('past maxRecords the oldest records are dropped from the list', () => {
    const queue = new FollowUpQueue();
    const total = FOLLOW_UP_LIMITS.maxRecords + 3;
    for (let i = 0; i < total; i++) queue.recordNotAccepted(`m${i}`, 'x', 'bad');
    const snapshot = queue.snapshot();
    assert.equal(snapshot.followUps.length, FOLLOW_UP_LIMITS.maxRecords);
    assert.equal(snapshot.followUps[0]?.messageId, 'm3');
  });

  test('unnamed signals get followup-1, -2… and the numbering continues in the next run', () => {
    const queue = new FollowUpQueue();
    assert.equal(queue.nextUnnamedId(), 'followup-1');
    assert.equal(queue.nextUnnamedId(), 'followup-2');
    const next = new FollowUpQueue(queue.snapshot());
    assert.equal(next.nextUnnamedId(), 'followup-3');
  });

  test('a snapshot carries settled and pending follow-ups into the next run, without waiters', () => {
    const queue = new FollowUpQueue();
    queue.enqueue('a', 'First');
    queue.deliverHead(JOB);
    queue.enqueue('b', 'Second', recordingWaiter());
    const snapshot = queue.snapshot();
    assert.deepEqual(
      JSON.parse(JSON.stringify(snapshot)),
      snapshot,
      'plain data, as continue-as-new carries it',
    );

    const next = new FollowUpQueue(snapshot);
    assert.deepEqual(next.records(), queue.records());
    assert.deepEqual(next.head(), { messageId: 'b', prompt: 'Second' });
    next.deliverHead(JOB);
    assert.equal(queue.statusOf('b'), 'pending', 'the runs do not share state');
  });
});
