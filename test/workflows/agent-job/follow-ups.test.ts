import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FOLLOW_UP_LIMITS, type AgentJob } from '../../../src/contract/agent-job';
import { FollowUpQueue, type FollowUpWaiter } from '../../../src/workflows/agent-job/follow-ups';

const JOB: AgentJob = { id: 'job_1', status: 'active', prLink: null };

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
    assert.deepEqual(queue.countByStatus(), { pending: 1, delivered: 1, rejected: 1, outcome_unknown: 0 });
    assert.equal(queue.statusOf('b'), 'rejected');
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

  test('is full at maxPending; refused follow-ups are recorded as rejected', () => {
    const queue = new FollowUpQueue();
    for (let i = 0; i < FOLLOW_UP_LIMITS.maxPending; i++) {
      assert.equal(queue.isFull, false);
      queue.enqueue(`m${i}`, 'x');
    }
    assert.equal(queue.isFull, true);
    queue.recordNotAccepted('late', 'y', 'the queue is full');
    assert.equal(queue.pendingCount, FOLLOW_UP_LIMITS.maxPending);
    assert.equal(queue.statusOf('late'), 'rejected');
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

  test('past maxRecords the oldest records are dropped and counted', () => {
    const queue = new FollowUpQueue();
    const total = FOLLOW_UP_LIMITS.maxRecords + 3;
    for (let i = 0; i < total; i++) queue.recordNotAccepted(`m${i}`, 'x', 'bad');
    const snapshot = queue.snapshot();
    assert.equal(snapshot.followUps.length, FOLLOW_UP_LIMITS.maxRecords);
    assert.equal(snapshot.omittedFollowUps, 3);
    assert.equal(snapshot.followUps[0]?.messageId, 'm3');
    assert.equal(queue.statusOf('m0'), undefined, 'a dropped record is forgotten');
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
