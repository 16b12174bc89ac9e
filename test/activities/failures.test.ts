import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { DocsApiFailureType, type DocsApiFailureDetails } from '../../src/contract/failure-types';
import { toApplicationFailure } from '../../src/activities/failures';
import {
  ConflictError,
  InvalidArgumentError,
  MalformedResponseError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../src/docs-api/errors';

function mapped(error: unknown, retryUnknownOutcome?: boolean): ApplicationFailure {
  const failure = toApplicationFailure(
    error,
    retryUnknownOutcome === undefined ? {} : { retryUnknownOutcome },
  );
  assert.ok(failure instanceof ApplicationFailure, String(failure));
  return failure;
}

function detailsOf(failure: ApplicationFailure): DocsApiFailureDetails {
  assert.equal(failure.details?.length, 1);
  return failure.details[0] as DocsApiFailureDetails;
}

describe('toApplicationFailure', () => {
  test('429 with Retry-After: retryable, nextRetryDelay from Retry-After, safe to re-send', () => {
    const error = new RateLimitedError('rate limited', {
      operation: 'createJob',
      status: 429,
      requestId: 'req_1',
      safeToRetry: true,
      retryAfterMs: 7000,
    });
    const failure = mapped(error);
    assert.equal(failure.type, DocsApiFailureType.rateLimited);
    assert.equal(failure.message, error.message);
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 7000);
    assert.deepEqual(detailsOf(failure), {
      operation: 'createJob',
      safeToRetry: true,
      status: 429,
      requestId: 'req_1',
      retryAfterMs: 7000,
    });
  });

  test('a 5xx after the service may have acted: retryable, not safe to re-send, no delay of its own', () => {
    const failure = mapped(
      new ServerError('server error', { operation: 'sendMessage', status: 500, safeToRetry: false }),
    );
    assert.equal(failure.type, DocsApiFailureType.server);
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, undefined);
    assert.equal(detailsOf(failure).safeToRetry, false);
    assert.equal(detailsOf(failure).retryAfterMs, undefined);
  });

  test('4xx and our own bad argument are non-retryable; the field is named', () => {
    const notFound = mapped(
      new NotFoundError('not found', { operation: 'getJob', status: 404, safeToRetry: false }),
    );
    assert.equal(notFound.type, DocsApiFailureType.notFound);
    assert.equal(notFound.nonRetryable, true);
    assert.equal(detailsOf(notFound).status, 404);

    const argument = mapped(new InvalidArgumentError('limit', 'must be at most 250', 'getVisitors'));
    assert.equal(argument.type, DocsApiFailureType.invalidArgument);
    assert.equal(argument.nonRetryable, true);
    assert.match(argument.message, /invalid argument limit: must be at most 250/);
    assert.equal(detailsOf(argument).field, 'limit');
    assert.equal(detailsOf(argument).status, undefined);
  });

  test('a malformed answer is retryable and names the response field', () => {
    const failure = mapped(
      new MalformedResponseError(
        'response field status: expected string',
        { operation: 'getJob', status: 200, safeToRetry: false },
        'status',
      ),
    );
    assert.equal(failure.type, DocsApiFailureType.malformedResponse);
    assert.equal(failure.nonRetryable, false);
    assert.equal(detailsOf(failure).field, 'status');
  });

  test('the operator opt-in marks transient failures safe to re-send, never refusals', () => {
    const timeout = new TimeoutError('no answer', { operation: 'createJob', safeToRetry: false });
    assert.equal(detailsOf(mapped(timeout)).safeToRetry, false);
    assert.equal(detailsOf(mapped(timeout, true)).safeToRetry, true);
    const conflict = new ConflictError('job is closed', {
      operation: 'sendMessage',
      status: 409,
      safeToRetry: false,
    });
    assert.equal(detailsOf(mapped(conflict, true)).safeToRetry, false);
  });

  test('anything but a client error is passed through unchanged', () => {
    const error = new Error('disk full');
    assert.equal(toApplicationFailure(error), error);
    assert.equal(toApplicationFailure('text'), 'text');
  });
});
