import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutType } from '@temporalio/common';
import { DocsApiFailureType } from '../../../src/contract/failure-types';
import { toApplicationFailure } from '../../../src/activities/failures';
import {
  ConflictError,
  InvalidArgumentError,
  MalformedResponseError,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  type DocsApiError,
} from '../../../src/docs-api/errors';
import {
  classifyCallFailure,
  failureTypeOf,
  isTimeout,
  messageOf,
  resendDelayMs,
} from '../../../src/workflows/agent-job/call-failures';
import { activityFailed, activityTimedOut } from '../../helpers/temporal-failures';

/** The client error as the workflow receives it: mapped by the activity, then across Temporal. */
function asWorkflowSeesIt(error: DocsApiError, retryUnknownOutcome = false) {
  const failure = toApplicationFailure(error, { retryUnknownOutcome });
  assert.ok(failure instanceof Error);
  return activityFailed(failure);
}

const create = { operation: 'createJob' } as const;

describe('classifyCallFailure: may a create or message be sent again?', () => {
  test('resend when the service cannot have acted: 429 (after Retry-After), 503, connection refused', () => {
    const rateLimited = new RateLimitedError('rate limited', {
      ...create,
      status: 429,
      safeToRetry: true,
      retryAfterMs: 7000,
    });
    assert.deepEqual(classifyCallFailure(asWorkflowSeesIt(rateLimited)), {
      kind: 'resend',
      reason: rateLimited.message,
      retryAfterMs: 7000,
    });
    const unavailable = new ServerError('unavailable', { ...create, status: 503, safeToRetry: true });
    assert.equal(classifyCallFailure(asWorkflowSeesIt(unavailable)).kind, 'resend');
    const refused = new NetworkError(
      'connect ECONNREFUSED',
      { ...create, safeToRetry: true },
      'ECONNREFUSED',
    );
    assert.deepEqual(classifyCallFailure(asWorkflowSeesIt(refused)), {
      kind: 'resend',
      reason: refused.message,
      retryAfterMs: undefined,
    });
  });

  test('refused for 4xx and our own bad argument, with the failure type and status', () => {
    const conflict = new ConflictError('job is closed', { ...create, status: 409, safeToRetry: false });
    assert.deepEqual(classifyCallFailure(asWorkflowSeesIt(conflict)), {
      kind: 'rejected',
      reason: conflict.message,
      failureType: DocsApiFailureType.conflict,
      status: 409,
    });
    const argument = new InvalidArgumentError('prompt', 'must not be empty', 'createJob');
    const outcome = classifyCallFailure(asWorkflowSeesIt(argument));
    assert.equal(outcome.kind, 'rejected');
    assert.equal(outcome.kind === 'rejected' && outcome.failureType, DocsApiFailureType.invalidArgument);
    assert.equal(outcome.kind === 'rejected' && outcome.status, undefined);
  });

  test('unknown when the request may have been processed: other 5xx, reset, client timeout, malformed 2xx', () => {
    const errors = [
      new ServerError('internal error', { ...create, status: 500, safeToRetry: false }),
      new NetworkError('socket hang up', { ...create, safeToRetry: false }, 'ECONNRESET'),
      new TimeoutError('no answer within 30 s', { ...create, safeToRetry: false }),
      new MalformedResponseError(
        'response body is not valid JSON',
        { ...create, status: 200, safeToRetry: false },
        undefined,
      ),
    ];
    for (const error of errors) {
      assert.deepEqual(
        classifyCallFailure(asWorkflowSeesIt(error)),
        { kind: 'unknown', reason: error.message },
        error.name,
      );
    }
  });

  test('an activity timeout (a worker killed mid-request) is unknown and names the timeout', () => {
    const outcome = classifyCallFailure(activityTimedOut(TimeoutType.START_TO_CLOSE));
    assert.equal(outcome.kind, 'unknown');
    assert.match(outcome.reason, /START_TO_CLOSE timeout/);
  });

  test('the operator opt-in turns unknown into resend, never a refusal', () => {
    const reset = new NetworkError('socket hang up', { ...create, safeToRetry: false }, 'ECONNRESET');
    assert.equal(classifyCallFailure(asWorkflowSeesIt(reset, true)).kind, 'resend');
    const conflict = new ConflictError('job is closed', { ...create, status: 409, safeToRetry: false });
    assert.equal(classifyCallFailure(asWorkflowSeesIt(conflict, true)).kind, 'rejected');
  });

  test('a failure without the client details (a bug in the activity) is unknown, its message kept short', () => {
    const outcome = classifyCallFailure(activityFailed(new TypeError('x'.repeat(1000))));
    assert.equal(outcome.kind, 'unknown');
    assert.equal(outcome.reason.length, 300);
    assert.ok(outcome.reason.endsWith('…'));
  });
});

describe('call failure helpers', () => {
  test('failureTypeOf, isTimeout and messageOf read through the ActivityFailure', () => {
    const conflict = new ConflictError('job is closed', { ...create, status: 409, safeToRetry: false });
    assert.equal(failureTypeOf(asWorkflowSeesIt(conflict)), DocsApiFailureType.conflict);
    assert.equal(failureTypeOf(new Error('plain')), undefined);
    assert.equal(isTimeout(activityTimedOut(TimeoutType.HEARTBEAT)), true);
    assert.equal(isTimeout(asWorkflowSeesIt(conflict)), false);
    assert.equal(messageOf(asWorkflowSeesIt(conflict)), conflict.message);
    assert.equal(messageOf('text'), 'text');
  });

  test('retries stopped by the schedule-to-close timeout count as a timeout, other ends do not', () => {
    const stillRunning = ApplicationFailure.retryable('job j1 is active (poll 3)', 'AgentJobStillRunning');
    const retriesTimedOut = (retryState: RetryState) =>
      new ActivityFailure('activity failed', 'pollAgentJob', '1', retryState, 'worker', stillRunning);
    assert.equal(isTimeout(retriesTimedOut(RetryState.TIMEOUT)), true);
    assert.equal(isTimeout(retriesTimedOut(RetryState.NON_RETRYABLE_FAILURE)), false);
    assert.equal(isTimeout(retriesTimedOut(RetryState.MAXIMUM_ATTEMPTS_REACHED)), false);
  });

  test('re-sends follow Retry-After when given, else 1 s doubling to 1 min', () => {
    assert.equal(resendDelayMs(0, 12_000), 12_000);
    assert.deepEqual(
      [0, 1, 2, 3, 6, 10].map((attempt) => resendDelayMs(attempt, undefined)),
      [1000, 2000, 4000, 8000, 60_000, 60_000],
    );
  });
});
