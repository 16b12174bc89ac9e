import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { getAgentJobState } from '../../src/client/agent-job';
import { AgentJobFailureType, type AgentJobState } from '../../src/contract/agent-job';
import { replayOptions } from '../../dev/workflow-bundle';
import {
  eventually,
  requestsOf,
  useAgentJobStack,
  projectWithJobs,
  startJob,
  timeOf,
  uniqueProject,
  workflowFailure,
} from './agent-job-harness';

const h = useAgentJobStack();

const gapsOf = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe('agentJob: transient errors while polling', () => {
  test('a burst of 429 on get-job is retried after Retry-After and not counted as polls', async () => {
    const projectId = projectWithJobs(h.sim, 'poll-429', 1500);
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'rateLimit', retryAfter: { seconds: 2 }, times: 2 });
    const handle = await startJob(h.client, { projectId, prompt: 'Rate limited reads' });
    const result = await handle.result();

    const reads = requestsOf(h.sim, { projectId, route: 'getJob' });
    assert.equal(result.status, 'completed');
    assert.deepEqual(
      reads.slice(0, 3).map((r) => r.status),
      [429, 429, 200],
    );
    assert.equal(result.polls, reads.filter((r) => r.status === 200).length);
    for (const gap of gapsOf(reads.slice(0, 3).map(timeOf))) assert.ok(gap >= 1950, `waited ${gap} ms`);
    // A worker that restarts replays such a run (retried first attempt) from history without divergence.
    await Worker.runReplayHistory(await replayOptions(), await handle.fetchHistory(), handle.workflowId);
  });

  test('a burst of 5xx on get-job is retried by the activity and not counted as polls', async () => {
    const projectId = projectWithJobs(h.sim, 'poll-5xx', 1500);
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 502, times: 1 });
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 500, times: 1 });
    const result = await (await startJob(h.client, { projectId, prompt: 'Flaky reads' })).result();

    const reads = requestsOf(h.sim, { projectId, route: 'getJob' });
    assert.equal(result.status, 'completed');
    assert.equal(reads.filter((r) => typeof r.status === 'number' && r.status >= 500).length, 2);
    assert.equal(result.polls, reads.length - 2);
  });
});

describe('agentJob: creating the job', () => {
  test('429 and 503 on create are re-sent (the service did not act): exactly one job', async () => {
    const projectId = projectWithJobs(h.sim, 'create-429', 1000);
    h.sim.faults.add({
      route: 'createJob',
      projectId,
      kind: 'rateLimit',
      retryAfter: { seconds: 1 },
      times: 1,
    });
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 503, times: 1 });
    const result = await (await startJob(h.client, { projectId, prompt: 'Busy service' })).result();

    const creates = requestsOf(h.sim, { projectId, route: 'createJob' });
    assert.equal(result.status, 'completed');
    assert.equal(creates.length, 3);
    assert.deepEqual(
      creates
        .slice(0, 2)
        .map((r) => r.status)
        .sort(),
      [429, 503],
    );
    assert.ok(
      typeof creates[2]?.status === 'number' && creates[2].status >= 200 && creates[2].status < 300,
      'the third create succeeded',
    );
    for (const gap of gapsOf(creates.map(timeOf))) assert.ok(gap >= 950, `re-sent after ${gap} ms`);
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1);
  });

  test('a 5xx after the service processed the create: AgentJobCreateOutcomeUnknown, never a second job', async () => {
    const projectId = uniqueProject('create-500');
    h.sim.faults.add({
      route: 'createJob',
      projectId,
      kind: 'status',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const failure = await workflowFailure(
      (await startJob(h.client, { projectId, prompt: 'Maybe created' })).result(),
    );

    assert.equal(failure.type, AgentJobFailureType.createOutcomeUnknown);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /not sent again/);
    assert.equal(requestsOf(h.sim, { projectId, route: 'createJob' }).length, 1);
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1, 'the service did create it');
  });

  test('a connection reset on create is an unknown outcome too', async () => {
    const projectId = uniqueProject('create-reset');
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'reset', times: 1 });
    const failure = await workflowFailure(
      (await startJob(h.client, { projectId, prompt: 'Reset' })).result(),
    );
    assert.equal(failure.type, AgentJobFailureType.createOutcomeUnknown);
    assert.equal(requestsOf(h.sim, { projectId, route: 'createJob' }).length, 1);
  });

  test('a 4xx on create fails with AgentJobCreateRejected', async () => {
    const projectId = uniqueProject('create-422');
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 422, times: 1 });
    const failure = await workflowFailure(
      (await startJob(h.client, { projectId, prompt: 'Refused' })).result(),
    );
    assert.equal(failure.type, AgentJobFailureType.createRejected);
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId] ?? 0, 0);
  });
});

describe('agentJob: cancellation', () => {
  test('stops polling at once and records that the service job may still run', async () => {
    const projectId = projectWithJobs(h.sim, 'cancel', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Cancel me' });
    const running = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      const read = requestsOf(h.sim, { projectId, route: 'getJob' }).length >= 1;
      return read && state.pollingSince !== null ? state : undefined;
    }, 'a first poll');

    await handle.cancel();
    await assert.rejects(
      handle.result(),
      (error: unknown) => error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure,
    );
    const readsAtCancel = requestsOf(h.sim, { projectId, route: 'getJob' }).length;
    await new Promise((resolve) => setTimeout(resolve, 2500));

    assert.equal(
      requestsOf(h.sim, { projectId, route: 'getJob' }).length,
      readsAtCancel,
      'no poll after cancel',
    );
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    const state: AgentJobState = await getAgentJobState(h.client, handle.workflowId);
    assert.match(state.lastError ?? '', new RegExp(`service job ${running.jobId} may still run`));
    assert.equal(h.sim.job(running.jobId ?? '')?.status, 'active');
  });
});
