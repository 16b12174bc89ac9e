import type { AgentJobResult } from '../../src/contract/agent-job';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTemporal } from '../../dev/temporal';
import { startTestWorker } from '../../dev/worker';
import { freePort } from '../helpers/ports';
import { useProcessStack } from '../helpers/stack';
import { startAgentJob } from '../../src/client/agent-job';
import { readCreateRecord } from '../../src/client/agent-job-runs';
import { AgentJobFailureType } from '../../src/contract/agent-job';
import { workflowBundlePath } from '../../dev/workflow-bundle';
import { startWorkerProcess } from '../../dev/worker-process';
import {
  eventually,
  projectWithJobs,
  requestsOf,
  startJob,
  TEST_POLLING,
  workflowFailure,
} from './agent-job-harness';

// Slow, process-level tests: a worker killed with SIGKILL mid-job, and the Temporal server restarted on its
// database mid-job. Each must end with exactly one job created at the service.

// The stack's worker process is the one killed while polling; the restart test runs its own server on a database
// file and uses only the stack's simulator.
const stack = useProcessStack({ name: 'agent-job-process', simulator: { jobs: { durationMs: 10_000 } } });
const service = () => ({ url: stack.sim.url, apiKey: stack.sim.apiKey });

async function pollsReached(
  env: TestWorkflowEnvironment,
  workflowId: string,
  projectId: string,
  polls: number,
): Promise<void> {
  const SCHEDULED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED;
  await eventually(
    async () => {
      if (requestsOf(stack.sim, { projectId, route: 'getJob' }).length < polls) return undefined;
      // Kill between polls (the poll activity waits for its next attempt), not while a get-job is in flight
      // (its retry would wait out the 30 s start-to-close timeout).
      const description = await env.client.workflow.getHandle(workflowId).describe();
      const pending = description.raw.pendingActivities ?? [];
      return pending.length === 1 && pending[0]?.state === SCHEDULED ? true : undefined;
    },
    `${polls} polls`,
    60_000,
  );
}

describe('agentJob: process failures', () => {
  test('a worker killed with SIGKILL while polling: a new worker finishes the job, created once', async () => {
    const { env, sim, worker: first } = stack;
    const projectId = projectWithJobs(sim, 'sigkill', 10_000);
    const handle = await startJob(env.client, { projectId, prompt: 'Survive a crash' });
    await pollsReached(env, handle.workflowId, projectId, 2);

    assert.equal(await first.kill('SIGKILL'), null, 'killed, not exited');
    const second = await startTestWorker(env, { service: service() });
    try {
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.match(result.prLink ?? '', /^https?:\/\//);
    } finally {
      await second.stop();
    }
    assert.equal(requestsOf(sim, { projectId, route: 'createJob' }).length, 1);
    assert.equal(sim.stats().jobsCreatedByProject[projectId], 1);
  });

  test('a worker killed after the service created the job, its run terminated: a start again creates nothing', async () => {
    // The create's answer never comes (the service created the job, then hangs), the worker dies before the
    // create activity records it, and the operator terminates the run: no create record exists.
    const { env, sim } = stack;
    const taskQueue = `agent-job-unrecorded-${process.pid}`;
    const projectId = projectWithJobs(sim, 'unrecorded', 10_000);
    sim.faults.add({ route: 'createJob', projectId, kind: 'hang', afterProcessing: true, times: 1 });
    const killed = startWorkerProcess({
      temporalAddress: env.address,
      service: service(),
      env: { TEMPORAL_TASK_QUEUE: taskQueue, WORKER_WORKFLOW_BUNDLE: await workflowBundlePath() },
    });
    await killed.ready;
    const input = { projectId, prompt: 'Created, then the worker died', polling: TEST_POLLING };
    const first = await startAgentJob(env.client, input, { key: 'k', taskQueue });
    const firstRunId = (await first.describe()).runId;
    await eventually(() => sim.stats().jobsCreatedByProject[projectId] === 1, 'the job at the service');
    assert.equal(await killed.kill('SIGKILL'), null, 'killed, not exited');
    await first.terminate('operator: the create activity waits for its timeout');
    assert.equal(await readCreateRecord(env.client, first.workflowId), undefined, 'no create record');

    const worker = await startTestWorker(env, { service: service(), taskQueue });
    try {
      const again = await startAgentJob(env.client, input, { key: 'k', taskQueue });
      assert.notEqual((await again.describe()).runId, firstRunId, 'a new run of the same id');
      const failure = await workflowFailure(again.result());
      assert.equal(failure.type, AgentJobFailureType.keyInUse);
      assert.match(
        failure.message,
        new RegExp(`sent a create whose outcome is unknown \\(run ${firstRunId} of workflow`),
      );
      const record = await readCreateRecord(env.client, first.workflowId);
      assert.deepEqual([record?.runId, record?.jobId], [firstRunId, undefined]);
    } finally {
      await worker.stop();
    }
    assert.equal(requestsOf(sim, { projectId, route: 'createJob' }).length, 1, 'one create for the key');
    assert.equal(sim.stats().jobsCreatedByProject[projectId], 1);
  });

  test('the Temporal server restarted on its database during a job: the job finishes, created once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-job-restart-'));
    const dbFilename = path.join(dir, 'temporal.db');
    const port = await freePort();
    const projectId = projectWithJobs(stack.sim, 'restart', 10_000);
    try {
      const before = await startTemporal({ dbFilename, port });
      const handle = await startJob(before.client, { projectId, prompt: 'Survive a server restart' });
      const workflowId = handle.workflowId;
      const worker = await startTestWorker(before, { service: service() });
      await pollsReached(before, workflowId, projectId, 2);
      await worker.stop();
      await before.teardown();

      const restarted = await startTemporal({ dbFilename, port });
      try {
        const again = await startTestWorker(restarted, { service: service() });
        try {
          const result = (await restarted.client.workflow.getHandle(workflowId).result()) as AgentJobResult;
          assert.equal(result.status, 'completed');
        } finally {
          await again.stop();
        }
      } finally {
        await restarted.teardown();
      }
      assert.equal(requestsOf(stack.sim, { projectId, route: 'createJob' }).length, 1);
      assert.equal(stack.sim.stats().jobsCreatedByProject[projectId], 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
