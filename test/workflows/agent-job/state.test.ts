import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  agentJobContinuationSchema,
  STATUS_NOT_CREATED,
  type AgentJob,
} from '../../../src/contract/agent-job';
import {
  initialState,
  isFinished,
  needsPolling,
  statusOf,
  toAgentJobState,
  toContinuation,
  toResult,
} from '../../../src/workflows/agent-job/state';

const NOW = Date.UTC(2026, 10, 24, 12);
const INPUT = { projectId: 'acme', prompt: 'Document the beta' };
const ACTIVE: AgentJob = { id: 'job_1', status: 'active', prLink: null, model: 'm-1' };

describe('RunState: what one run knows, what it shows, what crosses continue-as-new', () => {
  test('a new run: no job, the deadline 24 h from now by default, nothing to poll yet', () => {
    const state = initialState(INPUT, NOW);
    assert.equal(statusOf(state), STATUS_NOT_CREATED);
    assert.equal(state.deadlineAt, NOW + 86_400_000);
    assert.equal(needsPolling(state), false);
    assert.equal(isFinished(state), false);
    assert.deepEqual(toAgentJobState(state), {
      projectId: 'acme',
      jobId: null,
      status: STATUS_NOT_CREATED,
      prLink: null,
      polls: 0,
      nextPollAt: null,
      pollingSince: null,
      inFlight: null,
      pendingFollowUps: 0,
      notAcceptedFollowUps: 0,
      followUps: [],
      lastError: null,
      deadlineAt: '2026-11-25T12:00:00.000Z',
      polling: { initialInterval: 5000, maxInterval: 120_000, backoffCoefficient: 2, deadline: 86_400_000 },
      continuedRuns: 0,
      queuedForBudget: false,
      waitingForBudgetUntil: null,
    });
  });

  test('an active job is polled; a terminal one is finished once no follow-up waits or needs a read', () => {
    const state = initialState(INPUT, NOW);
    state.job = ACTIVE;
    assert.equal(needsPolling(state), true);
    state.poll = Promise.resolve();
    state.pollStartedAt = NOW + 5000;
    assert.equal(toAgentJobState(state).pollingSince, '2026-11-24T12:00:05.000Z');
    assert.equal(toAgentJobState(state).nextPollAt, null, "the poll activity's next read is in describe()");
    assert.equal(toAgentJobState(state).model, 'm-1');
    state.job = { ...ACTIVE, status: 'completed' };
    assert.equal(isFinished(state), false, 'the poll activity still runs');
    state.poll = null;

    state.job = { ...ACTIVE, status: 'completed', prLink: 'https://git.example/pr/1' };
    state.pollAfterMessage = true;
    assert.equal(needsPolling(state), true, 'a follow-up was accepted since the last read');
    state.pollAfterMessage = false;
    state.followUps.enqueue('m1', 'One more thing');
    assert.equal(isFinished(state), false, 'a follow-up still waits');
    state.followUps.deliverHead(state.job);
    assert.equal(isFinished(state), true);
    assert.deepEqual(toResult(state, state.job), {
      jobId: 'job_1',
      status: 'completed',
      prLink: 'https://git.example/pr/1',
      model: 'm-1',
      followUps: [{ messageId: 'm1', prompt: 'One more thing', status: 'delivered' }],
      polls: 0,
    });
  });

  test('the continuation passes its own schema and carries the run over: deadline, job, polls, follow-ups', () => {
    const first = initialState({ ...INPUT, polling: { deadline: '1h' } }, NOW);
    first.job = ACTIVE;
    first.polls = 12;
    first.lastError = 'getJob: HTTP 503';
    first.followUps.enqueue('m0', 'Sent one');
    first.followUps.sendingHead();
    first.followUps.deliverHead(ACTIVE);
    first.followUps.enqueue('m1', 'Pending one');
    const continuation = toContinuation(first);
    assert.ok(agentJobContinuationSchema.safeParse(continuation).success);
    assert.equal(continuation.continuedRuns, 1);

    const later = NOW + 30 * 60_000;
    const next = initialState({ ...INPUT, jobId: ACTIVE.id, continuation }, later);
    assert.equal(next.deadlineAt, NOW + 3_600_000, 'the deadline does not restart');
    assert.equal(next.continuedRuns, 1);
    assert.equal(next.polls, 12);
    assert.equal(next.jobId, 'job_1');
    assert.deepEqual(next.job, ACTIVE);
    assert.equal(next.lastError, 'getJob: HTTP 503');
    assert.deepEqual(next.followUps.head(), { messageId: 'm1', prompt: 'Pending one' });
    assert.equal(next.followUps.statusOf('m0'), 'delivered', 'the ledger crossed too');
    assert.equal(toContinuation(next).continuedRuns, 2);
    assert.equal(next.earlierUnread, false, 'a continued run of a job this id created has none to read');
  });

  test("a new run of a closed job that continues as new before its first read still reads the earlier runs'", () => {
    const attached = initialState({ ...INPUT, jobId: ACTIVE.id }, NOW);
    assert.equal(attached.earlierUnread, true);
    const continuation = toContinuation(attached);
    assert.ok(agentJobContinuationSchema.safeParse(continuation).success);
    const next = initialState({ ...INPUT, jobId: ACTIVE.id, continuation }, NOW + 1000);
    assert.equal(next.earlierUnread, true);
  });
});
