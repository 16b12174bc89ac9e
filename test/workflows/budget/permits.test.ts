import { signal } from '../../helpers/workflow-context';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { BudgetFailureType, budgetPermitQueuedSignal } from '../../../src/contract/budget';
import { docsApiFailure } from '../../../src/docs-api/failures';
import { BudgetPermits, clockTime, refusalOf } from '../../../src/workflows/budget/permits';
import { activityFailed } from '../../helpers/temporal-failures';

const PERMIT = { permitId: 'p-1', grantedAt: 1_700_000_000_000 };

/** A failure of the service as workflow code receives it: from the client, across Temporal. */
function fromActivity(failure: ApplicationFailure) {
  return activityFailed(failure, 'fetchVisitorsPages');
}

describe('refusalOf: what a spent permit reports to the limiter', () => {
  test("the service's 429 is a refusal, with its Retry-After when it sent one", () => {
    const init = { operation: 'getVisitors', status: 429 } as const;
    assert.deepEqual(
      refusalOf(
        fromActivity(docsApiFailure('rateLimited', 'slow down', { ...init, retryAfterMs: 9000 })),
        PERMIT,
      ),
      {
        grantedAt: PERMIT.grantedAt,
        retryAfterMs: 9000,
      },
    );
    assert.deepEqual(refusalOf(fromActivity(docsApiFailure('rateLimited', 'slow down', init)), PERMIT), {
      grantedAt: PERMIT.grantedAt,
    });
  });

  test('any other failure is not: a 5xx, a failure of another type, a plain error', () => {
    const init = { operation: 'getVisitors', status: 503 } as const;
    assert.equal(refusalOf(fromActivity(docsApiFailure('unavailable', 'down', init)), PERMIT), undefined);
    assert.equal(refusalOf(ApplicationFailure.nonRetryable('no', 'SomethingElse'), PERMIT), undefined);
    assert.equal(refusalOf(new Error('RateLimitedError'), PERMIT), undefined);
  });
});

describe('BudgetPermits', () => {
  test('a wait past the deadline fails non-retryable BudgetWaitTimedOut, naming the budget and the deadline', () => {
    const failure = new BudgetPermits('analytics', {
      projectId: 'acme',
      deadlineAt: Date.UTC(2026, 0, 2, 3),
    }).timedOut();
    assert.equal(failure.type, BudgetFailureType.waitTimedOut);
    assert.equal(failure.nonRetryable, true);
    assert.equal(
      failure.message,
      'no analytics budget for project acme before the deadline 2026-01-02T03:00:00.000Z',
    );
  });

  test("the limiter's estimate for a permit this run never asked for is ignored", () => {
    const changes: number[] = [];
    const permits = new BudgetPermits('agent', { projectId: 'p', deadlineAt: 0 }, () => changes.push(1));
    signal(budgetPermitQueuedSignal.name, {
      permitId: 'someone-else',
      estimatedGrantAt: 123,
      waitingAhead: 4,
    });
    assert.equal(permits.waitingUntil, null);
    assert.deepEqual(changes, []);
  });

  test('clockTime shows the UTC time of day an operator reads in the UI', () => {
    assert.equal(clockTime(Date.UTC(2026, 10, 24, 14, 5, 9, 700)), '14:05:09 UTC');
  });
});
