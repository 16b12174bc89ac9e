import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentJobActivities } from '../../src/activities/agent-job';
import type { AgentJob } from '../../src/contract/agent-job';
import type { DocsApiFailureDetails } from '../../src/docs-api/failure-types';
import { DocsApiClient } from '../../src/docs-api/client';
import { startSimulator, type Simulator } from '../../dev/simulator';

let sim: Simulator;
let docsApi: DocsApiClient;
let activities: ReturnType<typeof createAgentJobActivities>;

before(async () => {
  sim = await startSimulator({ jobs: { durationMs: 60_000 } });
  docsApi = new DocsApiClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    timeouts: { headersMs: 1000, bodyMs: 1000 },
  });
  activities = createAgentJobActivities({ docsApi });
});
after(async () => {
  await docsApi.close();
  await sim.close();
});
afterEach(() => sim.reset());

async function failureOf(
  promise: Promise<unknown>,
): Promise<ApplicationFailure & { details: [DocsApiFailureDetails] }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${inspect(error)}`);
    assert.ok(!inspect(error, { depth: 10 }).includes(sim.apiKey), 'the key leaked into the failure');
    return error as ApplicationFailure & { details: [DocsApiFailureDetails] };
  }
  assert.fail('expected a failure');
}

describe('agent job activities', () => {
  test('create, get and message return the job as the service answered', async () => {
    const env = new MockActivityEnvironment();
    const job: AgentJob = await env.run(activities.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a changelog',
    });
    assert.equal(job.status, 'active');
    const read: AgentJob = await env.run(activities.getAgentJob, { projectId: 'p1', jobId: job.id });
    assert.equal(read.id, job.id);
    await env.run(activities.sendAgentJobMessage, { projectId: 'p1', jobId: job.id, prompt: 'And a FAQ' });
    assert.equal(sim.stats().messagesAccepted, 1);
  });

  test('bad input: non-retryable, names the field, nothing sent', async () => {
    const failure = await failureOf(
      new MockActivityEnvironment().run(activities.createAgentJob, { projectId: 'p/1', prompt: 'x' }),
    );
    assert.equal(failure.type, 'InvalidArgumentError');
    assert.equal(failure.nonRetryable, true);
    assert.equal(failure.details[0].field, 'projectId');
    assert.equal(sim.requests().length, 0);
  });

  test('4xx answers are non-retryable', async () => {
    const env = new MockActivityEnvironment();
    const notFound = await failureOf(env.run(activities.getAgentJob, { projectId: 'p1', jobId: 'job_nope' }));
    assert.equal(notFound.type, 'NotFoundError');
    assert.equal(notFound.nonRetryable, true);
    assert.equal(notFound.details[0].status, 404);
  });

  test('429: retryable, nextRetryDelay from Retry-After, safe to re-send', async () => {
    sim.faults.add({ route: 'createJob', kind: 'rateLimit', retryAfter: { seconds: 12 }, times: 1 });
    const failure = await failureOf(
      new MockActivityEnvironment().run(activities.createAgentJob, { projectId: 'p1', prompt: 'x' }),
    );
    assert.equal(failure.type, 'RateLimitedError');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 12_000);
    assert.deepEqual(
      { safe: failure.details[0].safeToRetry, after: failure.details[0].retryAfterMs },
      { safe: true, after: 12_000 },
    );
    assert.equal(sim.stats().jobsCreated, 0);
  });

  test('a 500 on create is retryable in general but not safe to re-send', async () => {
    sim.faults.add({ route: 'createJob', kind: 'status', status: 500, afterProcessing: true, times: 1 });
    const failure = await failureOf(
      new MockActivityEnvironment().run(activities.createAgentJob, { projectId: 'p1', prompt: 'x' }),
    );
    assert.equal(failure.type, 'ServerError');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.details[0].safeToRetry, false);
  });

  test('the operator opt-in marks transient failures safe to re-send', async () => {
    const optedIn = createAgentJobActivities({ docsApi, retryUnknownOutcome: true });
    sim.faults.add({ route: 'createJob', kind: 'status', status: 502, times: 1 });
    const failure = await failureOf(
      new MockActivityEnvironment().run(optedIn.createAgentJob, { projectId: 'p1', prompt: 'x' }),
    );
    assert.equal(failure.details[0].safeToRetry, true);
  });

  test('cancellation aborts the request in flight', async () => {
    sim.faults.add({ route: 'getJob', kind: 'hang', times: 1 });
    const env = new MockActivityEnvironment();
    const pending = env.run(activities.getAgentJob, { projectId: 'p1', jobId: 'job_1' });
    setTimeout(() => env.cancel('CANCELLED'), 100);
    await assert.rejects(pending, (error: unknown) => error instanceof CancelledFailure);
  });
});
