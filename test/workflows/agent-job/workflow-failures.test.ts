import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { AgentJobFailureType, STATUS_NOT_CREATED, type AgentJob } from '../../../src/contract/agent-job';
import { DocsApiFailureType } from '../../../src/contract/failure-types';
import { initialState, type RunState } from '../../../src/workflows/agent-job/state';
import {
  createOutcomeUnknown,
  createRejected,
  jobFailed,
  pollRejected,
  timedOut,
} from '../../../src/workflows/agent-job/workflow-failures';
import { activityFailed } from '../../helpers/temporal-failures';

const NOW = Date.UTC(2026, 10, 24, 12);
const FAILED: AgentJob = { id: 'job_9', status: 'failed', prLink: null };

function stateWith(job: AgentJob | null): RunState {
  const state = initialState({ projectId: 'acme', prompt: 'x' }, NOW);
  state.jobId = job?.id ?? null;
  state.job = job;
  state.polls = 3;
  return state;
}

/** The failure's type, whether it is final, and what details[0] tells about the job. */
function shape(failure: ApplicationFailure) {
  const details: unknown = failure.details?.[0];
  assert.ok(typeof details === 'object' && details !== null);
  return {
    type: failure.type,
    nonRetryable: failure.nonRetryable,
    jobId: 'jobId' in details ? details.jobId : 'absent',
    status: 'status' in details ? details.status : 'absent',
  };
}

describe('the failures the agentJob workflow ends with: one type each, non-retryable, with the data', () => {
  test('AgentJobFailed carries the result once the job exists', () => {
    const failure = jobFailed(stateWith(FAILED));
    assert.deepEqual(shape(failure), {
      type: AgentJobFailureType.jobFailed,
      nonRetryable: true,
      jobId: 'job_9',
      status: 'failed',
    });
    assert.ok(
      failure.details?.[0] && typeof failure.details[0] === 'object' && 'polls' in failure.details[0],
    );
    assert.equal(failure.message, 'The agent job job_9 failed at the service (project acme)');
  });

  test('AgentJobTimedOut says whether a service job may still run', () => {
    const withJob = timedOut(stateWith({ ...FAILED, status: 'active' }));
    assert.equal(shape(withJob).type, AgentJobFailureType.timedOut);
    assert.match(withJob.message, /last status: active, 3 polls\); the service job job_9 may still run/);
    assert.match(timedOut(stateWith(null)).message, /no job was created/);
  });

  test('a create that may have happened, or was refused, carries the state and its cause', () => {
    const cause = activityFailed(
      ApplicationFailure.nonRetryable('HTTP 422', DocsApiFailureType.invalidRequest),
    );
    const rejected = createRejected(stateWith(null), 'HTTP 422', cause);
    assert.deepEqual(shape(rejected), {
      type: AgentJobFailureType.createRejected,
      nonRetryable: true,
      jobId: null,
      status: STATUS_NOT_CREATED,
    });
    assert.equal(rejected.cause, cause);
    const unknown = createOutcomeUnknown(stateWith(null), 'connection reset', cause);
    assert.equal(unknown.type, AgentJobFailureType.createOutcomeUnknown);
    assert.match(unknown.message, /connection reset.*look at project acme's jobs/);
  });

  test('get-job refused: 404 is AgentJobNotFound, anything else AgentJobPollRejected with the reason', () => {
    const job = { ...FAILED, status: 'active' };
    const notFound = activityFailed(ApplicationFailure.nonRetryable('gone', DocsApiFailureType.notFound));
    assert.equal(
      pollRejected(stateWith(job), DocsApiFailureType.notFound, notFound).type,
      AgentJobFailureType.jobNotFound,
    );
    const forbidden = activityFailed(
      ApplicationFailure.nonRetryable('forbidden: read-only key', 'AuthError'),
    );
    const rejected = pollRejected(stateWith(job), DocsApiFailureType.auth, forbidden);
    assert.equal(rejected.type, AgentJobFailureType.pollRejected);
    assert.equal(
      rejected.message,
      'The service rejected reading the agent job job_9: forbidden: read-only key',
    );
  });
});
