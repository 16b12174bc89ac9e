import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import {
  createAgentJobActivities,
  pollDelayMs,
  type AgentJobAnswer,
  type PollInput,
} from '../../src/activities/agent-job';
import {
  AgentJobActivityFailureType,
  AgentJobFailureType,
  type AgentJob,
  type AgentJobCreateRecord,
  type EarlierFollowUps,
} from '../../src/contract/agent-job';
import type { EarlierCreate } from '../../src/client/agent-job-runs';
import type { DocsApiFailureDetails } from '../../src/contract/failure-types';
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

/**
 * Agent job activities with create records in memory; `fail` makes reads, writes or history reads throw;
 * `earlierRuns.create` is the create an earlier run's history shows.
 */
function withRecords() {
  const records = new Map<string, AgentJobCreateRecord>();
  const fail = { read: false, write: false, history: false };
  const earlierRuns: { create?: EarlierCreate } = {};
  const withRecordsActivities = createAgentJobActivities({
    docsApi,
    createRecords: {
      read: (workflowId) =>
        fail.read
          ? Promise.reject(new Error('Temporal unavailable'))
          : Promise.resolve(records.get(workflowId)),
      write: (record) => {
        if (fail.write) return Promise.reject(new Error('Temporal unavailable'));
        if (!records.has(record.workflowId)) records.set(record.workflowId, record);
        return Promise.resolve();
      },
      earlierFollowUps: () =>
        Promise.resolve({
          followUps: [],
          sentFollowUps: { delivered: ['00000000000000a1'], outcomeUnknown: [] },
        }),
      earlierCreate: () =>
        fail.history
          ? Promise.reject(new Error('Temporal unavailable'))
          : Promise.resolve(earlierRuns.create),
    },
  });
  return { records, activities: withRecordsActivities, fail, earlierRuns };
}

/** An activity context of run `runId` of the workflow `team/a/job-7`. */
function env(runId: string): MockActivityEnvironment {
  return new MockActivityEnvironment({ workflowExecution: { workflowId: 'team/a/job-7', runId } });
}

describe('agent job activities', () => {
  test('create and message return the job as the service answered', async () => {
    const env = new MockActivityEnvironment();
    const job: AgentJob = await env.run(activities.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a changelog',
    });
    assert.equal(job.status, 'active');
    const sent: AgentJob = await env.run(activities.sendAgentJobMessage, {
      projectId: 'p1',
      jobId: job.id,
      prompt: 'And a FAQ',
    });
    assert.equal(sent.id, job.id);
    assert.equal(sim.stats().messagesAccepted, 1);
  });

  test('a call on a permit gives it back once answered, and a failed release never fails the call', async () => {
    const released: unknown[] = [];
    const withBudget = createAgentJobActivities({
      docsApi,
      releasePermit: (release) => {
        released.push(release);
        return Promise.reject(new Error('limiter unreachable'));
      },
    });
    sim.faults.add({ route: 'createJob', kind: 'status', status: 422, times: 1 });
    await failureOf(
      new MockActivityEnvironment().run(withBudget.createAgentJob, {
        projectId: 'p1',
        prompt: 'x',
        permitId: 'a',
      }),
    );
    const job: AgentJob = await new MockActivityEnvironment().run(withBudget.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a changelog',
      permitId: 'b',
    });
    assert.equal(job.status, 'active');
    assert.deepEqual(
      released.flatMap((r) => (r as { releases: { permitId: string }[] }).releases.map((x) => x.permitId)),
      ['a', 'b'],
    );
  });

  test('create records: the same prompt is answered, another refused, nothing sent; unreadable: re-send', async () => {
    const { records, activities: recorded, fail } = withRecords();
    const created: AgentJobAnswer = await env('r1').run(recorded.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a FAQ',
    });
    assert.equal(created.alreadyCreatedBy, undefined);
    assert.equal(records.get('team/a/job-7')?.jobId, created.id);

    const same: AgentJobAnswer = await env('r2').run(recorded.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a FAQ',
    });
    assert.deepEqual([same.id, same.alreadyCreatedBy?.runId], [created.id, 'r1']);
    const earlier: EarlierFollowUps | undefined = await env('r2').run(recorded.earlierFollowUps);
    assert.deepEqual(earlier?.sentFollowUps.delivered, ['00000000000000a1'], "the earlier runs' ledger");
    const other = await failureOf(
      env('r3').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Other' }),
    );
    assert.equal(other.type, AgentJobFailureType.keyInUse);
    assert.equal(other.nonRetryable, true);
    assert.match(
      other.message,
      new RegExp(`created job ${created.id} of project p1 for another prompt or project`),
    );
    assert.equal(sim.stats().jobsCreated, 1, 'one create in all');

    fail.read = true;
    const notRead = await failureOf(
      env('r4').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Add a FAQ' }),
    );
    assert.equal(notRead.details[0].safeToRetry, true, 'nothing was sent: the workflow sends it again later');
    assert.equal(sim.stats().jobsCreated, 1);
  });

  test('create records: a create the service may have acted on is recorded, else the workflow is asked to', async () => {
    const { records, activities: recorded, fail } = withRecords();
    sim.faults.add({ route: 'createJob', kind: 'status', status: 500, afterProcessing: true, times: 1 });
    await failureOf(env('r1').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Add a FAQ' }));
    const unknown = records.get('team/a/job-7');
    assert.deepEqual([unknown?.runId, unknown?.jobId], ['r1', undefined], 'recorded without its job');
    const refused = await failureOf(
      env('r2').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Add a FAQ' }),
    );
    assert.equal(refused.type, AgentJobFailureType.keyInUse);
    assert.match(refused.message, /outcome is unknown.*Look at the project's jobs/);

    records.clear();
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'wrong-types', times: 1 });
    const named = await failureOf(env('r3').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'x' }));
    assert.equal(
      named.details[0].jobId,
      records.get('team/a/job-7')?.jobId,
      'recorded with the job it named',
    );
    const otherProject = await failureOf(
      env('r4').run(recorded.createAgentJob, { projectId: 'p2', prompt: 'x' }),
    );
    assert.equal(otherProject.type, AgentJobFailureType.keyInUse, 'the same prompt for another project');

    records.clear();
    fail.write = true;
    const unrecorded: AgentJobAnswer = await env('r5').run(recorded.createAgentJob, {
      projectId: 'p1',
      prompt: 'y',
    });
    assert.equal(unrecorded.unrecorded, true, 'the workflow records it (recordCreate)');
    fail.write = false;
    await env('r5').run(recorded.recordCreate, { projectId: 'p1', prompt: 'y', jobId: unrecorded.id });
    assert.equal(records.get('team/a/job-7')?.jobId, unrecorded.id);
    assert.equal(sim.stats().jobsCreated, 3, 'one create per run that sent one');
  });

  test("create records: a create found in an earlier run's history is recorded; nothing is sent", async () => {
    const { records, activities: recorded, fail, earlierRuns } = withRecords();
    earlierRuns.create = { runId: 'r0', projectId: 'p0', prompt: 'Add a FAQ' };
    const refused = await failureOf(
      env('r1').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Add a FAQ' }),
    );
    assert.equal(refused.type, AgentJobFailureType.keyInUse);
    assert.match(refused.message, /outcome is unknown \(run r0 of workflow team\/a\/job-7 .*project p0/);
    const record = records.get('team/a/job-7');
    assert.deepEqual([record?.runId, record?.projectId, record?.jobId], ['r0', 'p0', undefined]);

    // Answered with a job: the same prompt is answered from it, another is refused.
    records.clear();
    earlierRuns.create = { runId: 'r0', projectId: 'p1', prompt: 'Add a FAQ', jobId: 'job-earlier' };
    const same: AgentJobAnswer = await env('r1').run(recorded.createAgentJob, {
      projectId: 'p1',
      prompt: 'Add a FAQ',
    });
    assert.deepEqual([same.id, same.alreadyCreatedBy?.runId], ['job-earlier', 'r0']);
    const other = await failureOf(
      env('r1').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Another prompt' }),
    );
    assert.equal(other.type, AgentJobFailureType.keyInUse);
    assert.match(other.message, /created job job-earlier of project p1 for another prompt/);

    records.clear();
    fail.history = true;
    const notRead = await failureOf(
      env('r2').run(recorded.createAgentJob, { projectId: 'p1', prompt: 'Add a FAQ' }),
    );
    assert.equal(notRead.details[0].safeToRetry, true, 'nothing was sent: the workflow sends it again later');
    assert.equal(sim.stats().jobsCreated, 0, 'no create was sent');
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
    const notFound = await failureOf(
      env.run(activities.sendAgentJobMessage, { projectId: 'p1', jobId: 'job_nope', prompt: 'x' }),
    );
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
    sim.faults.add({ route: 'createJob', kind: 'hang', times: 1 });
    const env = new MockActivityEnvironment();
    const pending = env.run(activities.createAgentJob, { projectId: 'p1', prompt: 'x' });
    setTimeout(() => env.cancel('CANCELLED'), 100);
    await assert.rejects(pending, (error: unknown) => error instanceof CancelledFailure);
  });
});

const WORKFLOW_ID = 'agent-job/p1/k';
const POLLING = { initialInterval: 1000, maxInterval: 8000, backoffCoefficient: 2 };
type PollResult = { job: AgentJob; polls: number };

/**
 * An attempt (by default the second: the first of a known status reads nothing) of pollAgentJob, as the server
 * runs it after `progress` (heartbeat details of the last attempt).
 */
function attempt(progress?: { polls: number; lastError?: string }, number = 2) {
  const logged: LogEntry[] = [];
  const env = new MockActivityEnvironment(
    {
      workflowExecution: { workflowId: WORKFLOW_ID, runId: 'r' },
      attempt: number,
      ...(progress ? { heartbeatDetails: progress } : {}),
    },
    { logger: new DefaultLogger('WARN', (entry) => logged.push(entry)) },
  );
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return {
    heartbeats,
    logged,
    run: (input: PollInput): Promise<PollResult> => env.run(activities.pollAgentJob, input),
  };
}

async function pollInputForNewJob(overrides: Partial<PollInput> = {}): Promise<PollInput> {
  const job: AgentJob = await new MockActivityEnvironment().run(activities.createAgentJob, {
    projectId: 'p1',
    prompt: 'x',
  });
  return { projectId: 'p1', jobId: job.id, polling: POLLING, status: 'active', ...overrides };
}

const delayOf = (failure: ApplicationFailure): number => msToNumber(failure.nextRetryDelay ?? 0);

describe('pollAgentJob: one read per attempt, the retries are the waits', () => {
  test('the first attempt for a status just answered reads nothing: the first read is one interval later', async () => {
    const input = await pollInputForNewJob();
    const readsBefore = sim.requests().filter((r) => r.route === 'getJob').length;
    const waited = await failureOf(attempt(undefined, 1).run(input));
    assert.equal(waited.type, AgentJobActivityFailureType.stillRunning);
    assert.equal(delayOf(waited), pollDelayMs(POLLING, 0, `${WORKFLOW_ID}#1`));
    assert.equal(sim.requests().filter((r) => r.route === 'getJob').length, readsBefore);
    const unread = await attempt(undefined, 1).run({ ...input, status: null });
    assert.deepEqual(
      [unread.job.status, unread.polls],
      ['active', 1],
      'a status not read yet is read at once',
    );
  });

  test('a running job fails benign and retryable, after the next interval of the schedule', async () => {
    const input = await pollInputForNewJob();
    const first = attempt();
    const failure = await failureOf(first.run(input));
    assert.equal(failure.type, AgentJobActivityFailureType.stillRunning);
    assert.equal(failure.category, ApplicationFailureCategory.BENIGN);
    assert.equal(failure.nonRetryable, false);
    assert.equal(delayOf(failure), pollDelayMs(POLLING, 1, `${WORKFLOW_ID}#2`));
    assert.ok(delayOf(failure) > 1800 && delayOf(failure) <= 2000, 'initialInterval × 2, minus at most 10 %');
    assert.deepEqual(first.heartbeats, [{ polls: 1 }], 'the read is carried to the next attempt');
    assert.deepEqual(failure.details[0], { status: 'active', polls: 1 });

    const third = attempt({ polls: 2, lastError: 'HTTP 502' });
    const later = await failureOf(third.run(input));
    assert.equal(delayOf(later), pollDelayMs(POLLING, 3, `${WORKFLOW_ID}#4`));
    assert.ok(delayOf(later) <= 8000, 'capped at maxInterval');
    assert.deepEqual(third.heartbeats, [{ polls: 3 }], 'a read answered: the earlier error is over');
  });

  test('the jitter is deterministic per workflow and read, and differs between workflows', () => {
    const key = 'agent-job/p/a#7';
    assert.equal(pollDelayMs(POLLING, 6, key), pollDelayMs(POLLING, 6, key));
    const delays = new Set(
      ['a', 'b', 'c', 'd', 'e'].map((k) => pollDelayMs(POLLING, 6, `agent-job/p/${k}#7`)),
    );
    assert.ok(delays.size > 1, 'workflows started together drift apart');
  });

  test('a terminal status, or another status than the one shown, returns the job with the reads so far', async () => {
    const input = await pollInputForNewJob({ status: null });
    const changed = await attempt().run(input);
    assert.deepEqual([changed.job.status, changed.polls], ['active', 1]);
    sim.completeJob(input.jobId, 'completed');
    const done = await attempt({ polls: 5 }).run({ ...input, status: 'active' });
    assert.deepEqual([done.job.status, done.polls], ['completed', 6]);
  });

  test('fields of an unexpected type: logged at each read and dropped', async () => {
    const input = await pollInputForNewJob();
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'odd-optional-types', times: 1 });
    const first = attempt();
    assert.equal((await failureOf(first.run(input))).type, AgentJobActivityFailureType.stillRunning);
    assert.equal(first.logged.length, 3, 'one warning per dropped field');
    assert.ok(!inspect(first.logged, { depth: 10 }).includes(sim.apiKey), 'the key leaked into the log');
    sim.completeJob(input.jobId, 'completed');
    const done = await attempt({ polls: 1 }).run(input);
    assert.equal(done.job.model, 'sim-agent-1');
  });

  test('transient errors wait for Retry-After, else the poll interval; not reads; kept as the last error', async () => {
    const input = await pollInputForNewJob();
    sim.faults.add({
      route: 'getJob',
      projectId: 'p1',
      kind: 'rateLimit',
      retryAfter: { seconds: 7 },
      times: 1,
    });
    const limited = attempt();
    const rateLimited = await failureOf(limited.run(input));
    assert.deepEqual([delayOf(rateLimited), rateLimited.nonRetryable], [7000, false]);
    assert.deepEqual(limited.heartbeats, [{ polls: 0, lastError: rateLimited.message }]);

    sim.faults.add({ route: 'getJob', projectId: 'p1', kind: 'status', status: 502, times: 1 });
    const serverError = await failureOf(attempt({ polls: 1 }).run(input));
    assert.notEqual(serverError.type, AgentJobActivityFailureType.stillRunning);
    assert.equal(delayOf(serverError), pollDelayMs(POLLING, 1, `${WORKFLOW_ID}#2`));

    const notFound = await failureOf(attempt().run({ ...input, jobId: 'job_unknown' }));
    assert.equal(notFound.nonRetryable, true);
  });
});
