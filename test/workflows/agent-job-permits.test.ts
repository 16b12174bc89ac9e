import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { followUpAnyState, getAgentJobState, sendFollowUp } from '../../src/client/agent-job';
import { budgetLimiterWorkflowId, type RateBudget } from '../../src/contract/budget';
import { ApiKey } from '../../src/docs-api/api-key';
import { useStack } from '../helpers/stack';
import { AgentJobFailureType, type AgentJobState } from '../../src/contract/agent-job';
import {
  TEST_POLLING,
  eventually,
  projectWithJobs,
  requestsOf,
  startJob,
  workflowFailure,
} from './agent-job-harness';

// Issue 39, cases 4 and 5: permits belong to a run, and their release never waits on a limiter that is gone.
// The worker's budget is small (2 creates and messages per 12 s) so that a permit has to wait.
const BUDGET: RateBudget = { requests: 2, windowMs: 12_000 };

const h = useStack({
  name: 'agent-job-permits',
  simulator: { jobs: { durationMs: 2000 } },
  worker: () => ({ budgets: { agent: BUDGET } }),
});

const prompt = (messageId: string) => `Follow-up ${messageId}`;

function sent(projectId: string, messageId: string): number {
  return requestsOf(h.sim, { projectId, route: 'sendMessage' }).filter((r) => r.prompt === prompt(messageId))
    .length;
}

describe("agent jobs and their project's permits", () => {
  test('case 4: a permit granted after its run was cancelled is freed, not handed to the next run', async () => {
    const projectId = projectWithJobs(h.sim, 'permit-run', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Permits of a run' }, 'run');
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('m1'), messageId: 'm1' });
    await eventually(() => sent(projectId, 'm1') === 1, 'm1 sent on the window’s second permit');
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('m2'), messageId: 'm2' });
    await eventually(
      async () => (await getAgentJobState(h.client, handle.workflowId)).queuedForBudget,
      'm2 waiting for the budget',
    );
    await handle.cancel();
    await eventually(
      async () => (await handle.describe()).status.name === 'CANCELLED',
      'the run to close cancelled',
    );

    // A new run of the same workflow id asks for its own permit, behind m2's in the project's queue.
    const cancelledAt = Date.now();
    const next = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('m3'),
      messageId: 'm3',
    });
    assert.equal(next.startedNewRun, true);
    // When the window frees, m2's grant finds its run closed: its place goes to m3 at once, not after the
    // 90 s hold of a permit nobody releases.
    await eventually(() => sent(projectId, 'm3') === 1, 'm3 sent once the window frees', 40_000);
    assert.ok(Date.now() - cancelledAt < 40_000);
    assert.equal(sent(projectId, 'm2'), 0, 'm2 was never sent: its run was cancelled while it waited');
    await h.client.workflow.getHandle(handle.workflowId).terminate();
  });

  test('a follow-up still waiting for the budget at the deadline ends the run AgentJobTimedOut, unsent', async () => {
    const projectId = projectWithJobs(h.sim, 'permit-deadline', 600_000);
    const handle = await startJob(
      h.client,
      { projectId, prompt: 'Deadline in the queue', polling: { ...TEST_POLLING, deadline: '8s' } },
      'deadline',
    );
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('d1'), messageId: 'd1' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('d2'), messageId: 'd2' });

    const failure = await workflowFailure(handle.result());
    assert.equal(failure.type, AgentJobFailureType.timedOut);
    const state = failure.details?.[0] as AgentJobState;
    assert.deepEqual(
      state.followUps.map((f) => `${f.messageId}: ${f.status}`),
      ['d1: delivered', 'd2: pending'],
      'd2 waited for the window’s third permit until the deadline: not sent, not refused',
    );
    assert.equal(sent(projectId, 'd1'), 1);
    assert.equal(sent(projectId, 'd2'), 0);
  });

  test('case 5: a limiter terminated during a call does not wedge the job; the next ask starts one', async () => {
    const projectId = projectWithJobs(h.sim, 'permit-limiter', 600_000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'latency', latencyMs: 4000, times: 1 });
    const handle = await startJob(h.client, { projectId, prompt: 'Limiter gone' }, 'limiter');
    await eventually(
      () => requestsOf(h.sim, { projectId, route: 'createJob' }).some((r) => r.status === 0),
      'the create at the service',
    );
    const limiterId = budgetLimiterWorkflowId('agent', new ApiKey(h.sim.apiKey).fingerprint(), projectId);
    await h.client.workflow.getHandle(limiterId).terminate('operator');

    const { jobId } = await eventually(
      async () => {
        const state = await getAgentJobState(h.client, handle.workflowId);
        return state.jobId !== null ? state : undefined;
      },
      'the created job in the state (the release gave up on the missing limiter)',
      20_000,
    );
    h.sim.completeJob(jobId ?? '', 'completed');
    assert.equal((await handle.result()).jobId, jobId);

    const second = await startJob(h.client, { projectId, prompt: 'After the limiter' }, 'second');
    await eventually(
      () => requestsOf(h.sim, { projectId, route: 'createJob' }).length === 2,
      'the next create, through a limiter started again',
      20_000,
    );
    assert.equal((await h.client.workflow.getHandle(limiterId).describe()).status.name, 'RUNNING');
    await second.terminate();
  });
});
