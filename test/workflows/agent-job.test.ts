import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { followUpAnyState, getAgentJobState } from '../../src/client/agent-job';
import {
  AgentJobFailureType,
  STATUS_NOT_FOUND,
  type AgentJobResult,
  type AgentJobState,
} from '../../src/contract/agent-job';
import { FollowUpNotAcceptedError } from '../../src/contract/errors';
import { followUpSignal, getStateQuery } from '../../src/contract/messages';
import { AgentJobIdKey, AgentJobStatusKey, DocsProjectIdKey, WorkflowType } from '../../src/contract/names';
import { pollDelayMs } from '../../src/activities/agent-job';
import { resolvePolling } from '../../src/workflows/agent-job/state';
import {
  eventually,
  historyOf,
  requestsOf,
  useAgentJobStack,
  projectWithJobs,
  startJob,
  timeOf,
  uniqueProject,
  workflowFailure,
} from './agent-job-harness';

const h = useAgentJobStack();

describe('agentJob: outcomes', () => {
  test('a completed job returns its PR link; search attributes, summary and state follow the job', async () => {
    const projectId = projectWithJobs(h.sim, 'completed', 1500);
    const handle = await startJob(h.client, {
      projectId,
      prompt: 'Fix the typos in the quickstart\nand keep the tone.',
    });

    const result = await handle.result();

    assert.equal(result.status, 'completed');
    assert.match(result.prLink ?? '', /^https?:\/\/\S+$/);
    assert.ok(result.polls >= 1);
    assert.deepEqual(result.followUps, []);
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1);
    assert.equal(h.sim.job(result.jobId)?.status, 'completed');

    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(DocsProjectIdKey), projectId);
    assert.equal(description.typedSearchAttributes.get(AgentJobIdKey), result.jobId);
    assert.equal(description.typedSearchAttributes.get(AgentJobStatusKey), 'completed');
    assert.equal(await description.staticSummary(), 'Fix the typos in the quickstart');
    assert.match((await description.staticDetails()) ?? '', /and keep the tone/);

    const state = await handle.query(getStateQuery);
    assert.deepEqual(
      { jobId: state.jobId, status: state.status, prLink: state.prLink, polls: state.polls },
      { jobId: result.jobId, status: 'completed', prLink: result.prLink, polls: result.polls },
    );
    assert.equal(state.nextPollAt, null);
    assert.equal(state.pollingSince, null);
    const metadata = await handle.query(workflowMetadataQuery);
    assert.match(metadata.currentDetails ?? '', /\*\*Status:\*\* completed/);
    // 11 events per poll, as agent-job/backoff.test.ts assumes for its 24-hour estimate; the create's budget
    // permit (ask, grant signal, release) adds 10.
    assert.ok(description.historyLength <= 24 + 11 * result.polls, `${description.historyLength} events`);
  });

  test('while a create or a follow-up waits for its answer, getState and the details say so', async () => {
    const projectId = projectWithJobs(h.sim, 'in-flight', 3000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'latency', latencyMs: 2000, times: 1 });
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'latency', latencyMs: 2000, times: 1 });
    const handle = await startJob(h.client, { projectId, prompt: 'Fix the typos' });
    const creating = await eventually(async () => {
      const state = await handle.query(getStateQuery);
      return state.inFlight !== null && state;
    }, 'the create in flight');
    assert.equal(creating.status, 'creating');
    assert.match(creating.inFlight ?? '', /^the create sent at \S+Z, waiting for the service's answer$/);
    const metadata = await handle.query(workflowMetadataQuery);
    assert.match(metadata.currentDetails ?? '', /\*\*In flight:\*\* the create sent at/);

    await eventually(async () => (await handle.query(getStateQuery)).jobId !== null, 'the job created');
    await handle.signal(followUpSignal, { prompt: 'Also the FAQ', messageId: 'faq' });
    const sending = await eventually(async () => {
      const state = await handle.query(getStateQuery);
      return state.inFlight !== null && state;
    }, 'the follow-up in flight');
    assert.match(sending.inFlight ?? '', /^follow-up faq sent at \S+Z, waiting for the service's answer$/);

    const result = await handle.result();
    assert.equal(result.followUps[0]?.status, 'delivered');
    assert.equal((await handle.query(getStateQuery)).inFlight, null);
  });

  test('a job completed without edits returns prLink null', async () => {
    const projectId = uniqueProject('no-edits');
    h.sim.configureProject(projectId, { jobs: { durationMs: 1000, outcome: 'completed-no-edits' } });
    const result = await (await startJob(h.client, { projectId, prompt: 'Check the links' })).result();
    assert.equal(result.status, 'completed');
    assert.equal(result.prLink, null);
  });

  test('a failed job fails the workflow with a typed, non-retryable failure carrying the job', async () => {
    const projectId = projectWithJobs(h.sim, 'failed', 1000, 'failed');
    const handle = await startJob(h.client, { projectId, prompt: 'Rewrite everything' });

    const failure = await workflowFailure(handle.result());

    assert.equal(failure.type, AgentJobFailureType.jobFailed);
    assert.equal(failure.nonRetryable, true);
    const job = failure.details?.[0] as AgentJobResult;
    assert.equal(job.status, 'failed');
    assert.equal(h.sim.job(job.jobId)?.status, 'failed');
    assert.ok(job.polls >= 1);
    const description = await handle.describe();
    assert.equal(description.status.name, 'FAILED');
    assert.equal(description.typedSearchAttributes.get(AgentJobStatusKey), 'failed');
  });

  test('an archived job returns with its archivedAt', async () => {
    const projectId = projectWithJobs(h.sim, 'archived', 1000, 'archived');
    const result = await (await startJob(h.client, { projectId, prompt: 'Archive me' })).result();
    assert.equal(result.status, 'archived');
    assert.ok(result.archivedAt, 'archivedAt is set');
  });
});

describe('agentJob: polling', () => {
  test('polls follow initialInterval × backoffCoefficient up to maxInterval, with the documented jitter', async () => {
    const projectId = projectWithJobs(h.sim, 'backoff', 10_000);
    const polling = { initialInterval: '1s', backoffCoefficient: 2, maxInterval: '4s', deadline: '1m' };
    const handle = await startJob(h.client, { projectId, prompt: 'Slow job', polling });
    const result = await handle.result();

    const reads = requestsOf(h.sim, { projectId, route: 'getJob' });
    const [create] = requestsOf(h.sim, { projectId, route: 'createJob' });
    assert.ok(create);
    assert.equal(reads.length, result.polls, 'every read was a poll: no errors here');
    const times = [timeOf(create), ...reads.map(timeOf)];
    const settings = resolvePolling(polling);
    const expected = reads.map((_, i) => pollDelayMs(settings, i, `${handle.workflowId}#${i + 1}`));
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    // Expected 1 s, 2 s, 4 s, 4 s (each shortened by <= 10 %), plus activity and task latency.
    assert.deepEqual(
      expected.map((ms) => Math.ceil(ms / 1000)),
      [1, 2, 4, 4, 4, 4].slice(0, expected.length),
    );
    gaps.forEach((gap, i) => {
      const want = expected[i] as number;
      assert.ok(
        gap >= want - 50 && gap <= Math.max(want, 1000) + 800,
        `gap ${i}: ${gap} ms, expected ~${want} ms`,
      );
    });
  });

  test('the deadline ends the workflow with AgentJobTimedOut; the service job may still run', async () => {
    const projectId = projectWithJobs(h.sim, 'deadline', 600_000);
    const handle = await startJob(h.client, {
      projectId,
      prompt: 'Never ends in time',
      polling: { initialInterval: '1s', maxInterval: '1s', deadline: '3s' },
    });
    const failure = await workflowFailure(handle.result());
    assert.equal(failure.type, AgentJobFailureType.timedOut);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /may still run/);
    const state = failure.details?.[0] as AgentJobState;
    assert.equal(state.status, 'active');
    assert.ok(state.jobId);
    assert.equal(h.sim.job(state.jobId)?.status, 'active');
  });

  test('an unknown status is shown and treated as running until the job ends', async () => {
    const projectId = projectWithJobs(h.sim, 'drift', 4000);
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'drift', drift: 'unknown-status', times: 2 });
    const handle = await startJob(h.client, { projectId, prompt: 'Drifting status' });
    const seen = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return !['creating', 'active', 'completed'].includes(state.status) ? state : undefined;
    }, 'an unknown status in getState');
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(AgentJobStatusKey), seen.status);
    const result = await handle.result();
    assert.equal(result.status, 'completed');
  });

  test('bad input fails at once with InvalidInput naming the field; nothing reaches the service', async () => {
    const projectId = uniqueProject('bad-input');
    const handle = await h.client.workflow.start(WorkflowType.agentJob, {
      taskQueue: 'docs-agent',
      workflowId: `bad-input-${projectId}`,
      args: [{ projectId, prompt: 'x', polling: { initialInterval: 'soon' } }],
    });
    const failure = await workflowFailure(handle.result());
    assert.equal(failure.type, AgentJobFailureType.invalidInput);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /polling\.initialInterval/);
    assert.equal(requestsOf(h.sim, { projectId }).length, 0);
  });

  test('a job id the service does not know ends the workflow with AgentJobNotFound; a follow-up is refused', async () => {
    const projectId = uniqueProject('not-found');
    const handle = await startJob(h.client, { projectId, prompt: 'Attach', jobId: 'job_does_not_exist' });
    const failure = await workflowFailure(handle.result());
    assert.equal(failure.type, AgentJobFailureType.jobNotFound);
    assert.equal((failure.details?.[0] as AgentJobState).status, STATUS_NOT_FOUND);
    assert.equal(requestsOf(h.sim, { projectId, route: 'getJob' }).length, 1, 'a 404 is not retried');
    const { runId, typedSearchAttributes } = await handle.describe();
    assert.equal(typedSearchAttributes.get(AgentJobStatusKey), STATUS_NOT_FOUND);

    await assert.rejects(
      followUpAnyState(h.client, handle.workflowId, { prompt: 'Still there?', messageId: 'm1' }),
      (error: unknown) =>
        error instanceof FollowUpNotAcceptedError &&
        error.message === 'Job job_does_not_exist is not_found: it takes no follow-ups; start a new job',
    );
    assert.equal((await handle.describe()).runId, runId, 'no new run');
    assert.equal(requestsOf(h.sim, { projectId }).length, 1, 'nothing more reached the service');
  });
});

describe('agentJob: history', () => {
  test('a job polled 10+ times writes at most 36 events: the waits are the poll activity retries', async (t) => {
    const projectId = projectWithJobs(h.sim, 'history', 12_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Polled often' });
    const result = await handle.result();

    const reads = requestsOf(h.sim, { projectId, route: 'getJob' });
    assert.ok(reads.length >= 10, `${reads.length} reads`);
    assert.equal(result.polls, reads.length, 'every read counted, across the activity attempts');
    const events = (await handle.fetchHistory()).events ?? [];
    const tasks = events.filter((event) => event.workflowTaskCompletedEventAttributes).length;
    t.diagnostic(`${events.length} events, ${tasks} workflow tasks for ${reads.length} polls`);
    assert.ok(events.length <= 36, `${events.length} events for ${reads.length} polls`);
    assert.ok(tasks <= 6, `${tasks} workflow tasks`);
    const priorityOf = (type: string) =>
      events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type)
        ?.activityTaskScheduledEventAttributes?.priority?.priorityKey;
    assert.deepEqual([priorityOf('createAgentJob'), priorityOf('pollAgentJob')], [1, 5], 'task priority');
  });

  test('the API key appears in no workflow history of this server', async () => {
    const secret = h.sim.apiKey.slice(h.sim.apiKey.indexOf('_') + 1);
    let checked = 0;
    for await (const execution of h.client.workflow.list()) {
      const history = await historyOf(h.client.workflow.getHandle(execution.workflowId, execution.runId));
      assert.ok(!history.includes(secret), `the key leaked into ${execution.workflowId}`);
      checked += 1;
    }
    assert.ok(checked >= 5, `checked ${checked} histories`);
  });
});
