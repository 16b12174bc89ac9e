import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentJobActivities } from '../../src/activities/agent-job';
import {
  JOB_STILL_RUNNING,
  type PolledJob,
  type PollUntilTerminalInput,
} from '../../src/activities/poll-agent-job';
import type { AgentJob } from '../../src/contract/agent-job';
import { DocsApiClient } from '../../src/docs-api/client';
import { msToNumber } from '@temporalio/common/lib/time';
import { pollDelayMs, pollJitterKey } from '../../src/workflows/agent-job/backoff';
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

const WORKFLOW_ID = 'agent-job/p1/k';
const POLLING = { initialIntervalMs: 1000, maxIntervalMs: 8000, backoffCoefficient: 2 };

/** An attempt of pollAgentJob, as the server would run it after `readsBefore` answered reads. */
function attempt(readsBefore: number) {
  const env = new MockActivityEnvironment({
    workflowExecution: { workflowId: WORKFLOW_ID, runId: 'r' },
    ...(readsBefore > 0 ? { heartbeatDetails: { polls: readsBefore } } : {}),
  });
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return {
    heartbeats,
    run: (input: PollUntilTerminalInput): Promise<PolledJob> => env.run(activities.pollAgentJob, input),
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ApplicationFailure, String(error));
  return error;
}

async function createJob(): Promise<string> {
  const job: AgentJob = await new MockActivityEnvironment().run(activities.createAgentJob, {
    projectId: 'p1',
    prompt: 'x',
  });
  return job.id;
}

describe('pollAgentJob: one read per attempt, the retries are the waits', () => {
  test('a running job fails benign and retryable, after the next interval of the schedule', async () => {
    const jobId = await createJob();
    const input = {
      projectId: 'p1',
      jobId,
      polling: POLLING,
      firstPoll: 4,
      firstStep: 1,
      knownStatus: 'active',
    };
    const first = attempt(0);
    const failure = await failureOf(first.run(input));
    assert.equal(failure.type, JOB_STILL_RUNNING);
    assert.equal(failure.category, ApplicationFailureCategory.BENIGN);
    assert.equal(failure.nonRetryable, false);
    const settings = { ...POLLING, deadlineMs: 0 };
    assert.equal(
      msToNumber(failure.nextRetryDelay ?? 0),
      pollDelayMs(settings, 2, pollJitterKey(WORKFLOW_ID, 5)),
    );
    assert.deepEqual(first.heartbeats, [{ polls: 1 }], 'the read is carried to the next attempt');

    const third = attempt(2);
    const later = await failureOf(third.run(input));
    assert.equal(
      msToNumber(later.nextRetryDelay ?? 0),
      pollDelayMs(settings, 4, pollJitterKey(WORKFLOW_ID, 7)),
    );
    assert.ok(msToNumber(later.nextRetryDelay ?? 0) <= 8000, 'capped at maxInterval');
    assert.deepEqual(third.heartbeats, [{ polls: 3 }]);
  });

  test('a terminal status, or one the workflow has not seen, returns the job with the reads so far', async () => {
    const jobId = await createJob();
    const input = {
      projectId: 'p1',
      jobId,
      polling: POLLING,
      firstPoll: 1,
      firstStep: 0,
      knownStatus: 'creating',
    };
    const changed = await attempt(0).run(input);
    assert.deepEqual([changed.job.status, changed.polls], ['active', 1]);
    sim.completeJob(jobId, 'completed');
    const done = await attempt(5).run({ ...input, knownStatus: 'active' });
    assert.deepEqual([done.job.status, done.polls], ['completed', 6]);
  });

  test('transient errors wait for Retry-After, else the poll interval, and are not counted as reads', async () => {
    const jobId = await createJob();
    const input = {
      projectId: 'p1',
      jobId,
      polling: POLLING,
      firstPoll: 1,
      firstStep: 0,
      knownStatus: 'active',
    };
    sim.faults.add({
      route: 'getJob',
      projectId: 'p1',
      kind: 'rateLimit',
      retryAfter: { seconds: 7 },
      times: 1,
    });
    const limited = attempt(0);
    const rateLimited = await failureOf(limited.run(input));
    assert.equal(msToNumber(rateLimited.nextRetryDelay ?? 0), 7000);
    assert.equal(rateLimited.nonRetryable, false);
    assert.deepEqual(limited.heartbeats, []);

    sim.faults.add({ route: 'getJob', projectId: 'p1', kind: 'status', status: 502, times: 1 });
    const serverError = await failureOf(attempt(0).run(input));
    assert.notEqual(serverError.type, JOB_STILL_RUNNING);
    const settings = { ...POLLING, deadlineMs: 0 };
    assert.equal(
      msToNumber(serverError.nextRetryDelay ?? 0),
      pollDelayMs(settings, 1, pollJitterKey(WORKFLOW_ID, 2)),
    );

    const notFound = await failureOf(attempt(0).run({ ...input, jobId: 'job_unknown' }));
    assert.equal(notFound.nonRetryable, true);
  });
});
