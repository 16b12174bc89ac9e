import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import {
  agentJobFailureOf,
  followUpAnyState,
  followUpFailureOf,
  getAgentJobState,
  sendFollowUp,
  sendFollowUpAndWait,
  startAgentJob,
} from '../../src/client/agent-job';
import { AgentJobFailureType, FollowUpFailureType } from '../../src/contract/agent-job';
import { FollowUpNotAcceptedError } from '../../src/contract/errors';
import { DocsProjectIdKey, agentJobWorkflowId } from '../../src/contract/names';
import { InputValidationError } from '../../src/contract/validation';
import {
  TEST_POLLING,
  eventually,
  projectWithJobs,
  requestsOf,
  useAgentJobStack,
  uniqueProject,
} from '../workflows/agent-job-harness';

const h = useAgentJobStack();

/** A client whose connection is never opened: any call to Temporal would fail. */
function unreachableClient(): Client {
  return new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
}

/** A job whose create the service refuses (422): its run fails before any service job exists. */
async function startRefusedCreate(label: string) {
  const projectId = uniqueProject(label);
  h.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 422, times: 1 });
  const handle = await startAgentJob(
    h.client,
    { projectId, prompt: 'Refused', polling: TEST_POLLING },
    { key: 'k' },
  );
  return { projectId, handle };
}

const invalid = (field: string) => (error: unknown) =>
  error instanceof InputValidationError && error.issues.some((issue) => issue.field === field);

describe('agent job client: validation before contacting Temporal', () => {
  test('startAgentJob names the bad field', async () => {
    const client = unreachableClient();
    await assert.rejects(
      startAgentJob(client, { projectId: 'p1', prompt: ' ' }, { key: 'k' }),
      invalid('prompt'),
    );
    await assert.rejects(
      startAgentJob(client, { projectId: 'p/1', prompt: 'x' }, { key: 'k' }),
      invalid('projectId'),
    );
    await assert.rejects(
      startAgentJob(
        client,
        { projectId: 'p1', prompt: 'x', polling: { backoffCoefficient: 0 } },
        { key: 'k' },
      ),
      invalid('polling.backoffCoefficient'),
    );
    await assert.rejects(
      startAgentJob(client, { projectId: 'p1', prompt: 'x' }, { key: '' }),
      invalid('idempotency key'),
    );
  });

  test('follow-ups are checked before they are sent', async () => {
    const client = unreachableClient();
    await assert.rejects(sendFollowUp(client, 'wf', { prompt: '' }), invalid('prompt'));
    await assert.rejects(
      sendFollowUpAndWait(client, 'wf', { prompt: 'x', messageId: '' }),
      invalid('messageId'),
    );
    await assert.rejects(followUpAnyState(client, 'wf', { prompt: '' }), invalid('prompt'));
  });
});

describe('agent job client: on the dev server', () => {
  test('startAgentJob never creates twice per key, sets the summary and DocsProjectId', async () => {
    const projectId = projectWithJobs(h.sim, 'client-start', 1000);
    const input = { projectId, prompt: 'Document the CLI\nwith examples', polling: TEST_POLLING };

    const first = await startAgentJob(h.client, input, { key: 'cli-docs' });
    const firstRunId = (await first.describe()).runId;
    const retried = await startAgentJob(h.client, input, { key: 'cli-docs' });
    assert.equal(first.workflowId, agentJobWorkflowId(projectId, 'cli-docs'));
    const running = await retried.describe();
    assert.equal(running.runId, firstRunId);
    assert.equal(running.typedSearchAttributes.get(DocsProjectIdKey), projectId);
    assert.equal(await running.staticSummary(), 'Document the CLI');

    const { jobId } = await first.result();
    const afterClose = await startAgentJob(h.client, input, { key: 'cli-docs' });
    const again = await afterClose.result();
    assert.equal(again.jobId, jobId, 'a run after close follows the same job');
    assert.equal(again.alreadyCreatedBy?.runId, firstRunId, 'and says which run created it');
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1);
  });

  test('followUpAnyState signals a running workflow; getAgentJobState reads it', async () => {
    const projectId = projectWithJobs(h.sim, 'client-running', 600_000);
    const handle = await startAgentJob(
      h.client,
      { projectId, prompt: 'Long job', polling: TEST_POLLING },
      { key: 'k' },
    );
    const { jobId } = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return state.jobId ? state : undefined;
    }, 'the job');
    const delivery = await followUpAnyState(h.client, handle.workflowId, {
      prompt: 'More',
      messageId: 'more',
    });
    assert.equal(delivery.startedNewRun, false);
    assert.equal(delivery.jobId, jobId);
    await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return state.followUps.some((f) => f.messageId === 'more' && f.status === 'delivered');
    }, 'the delivery');
    h.sim.completeJob(jobId ?? '', 'completed');
    await handle.result();
  });

  test('followUpAnyState refuses a workflow that closed before any job existed; agentJobFailureOf reads why', async () => {
    const { projectId, handle } = await startRefusedCreate('client-no-job');
    const failure = await handle.result().then(
      () => assert.fail('expected a failure'),
      (error: unknown) => agentJobFailureOf(error),
    );
    assert.equal(failure?.type, AgentJobFailureType.createRejected);
    assert.equal(failure.jobId, null, 'typed: no job was created');
    assert.deepEqual(failure.followUps, []);
    await assert.rejects(
      followUpAnyState(h.client, handle.workflowId, { prompt: 'Anyone there?' }),
      (error: unknown) =>
        error instanceof FollowUpNotAcceptedError &&
        error.workflowId === handle.workflowId &&
        /before a service job was created/.test(error.message),
    );
    assert.equal(requestsOf(h.sim, { projectId, route: 'sendMessage' }).length, 0);
  });

  test('a follow-up to a closed run is FollowUpNotAccepted, by update or signal; an unknown id is not found', async () => {
    const { projectId, handle } = await startRefusedCreate('client-closed');
    await handle.result().catch(() => undefined);
    const notAccepted = (error: unknown) => {
      assert.ok(error instanceof FollowUpNotAcceptedError, String(error));
      assert.match(error.message, /closed \(FAILED\) before it took the follow-up, so nothing was sent/);
      assert.ok(error.cause instanceof WorkflowNotFoundError, 'the SDK error is kept as the cause');
      assert.deepEqual(followUpFailureOf(error), {
        type: FollowUpFailureType.notAccepted,
        message: error.message,
      });
      return true;
    };
    await assert.rejects(
      sendFollowUpAndWait(h.client, handle.workflowId, { prompt: 'Late update' }),
      notAccepted,
    );
    await assert.rejects(sendFollowUp(h.client, handle.workflowId, { prompt: 'Late signal' }), notAccepted);
    await assert.rejects(
      sendFollowUpAndWait(h.client, `${handle.workflowId}-nobody`, { prompt: 'Hello?' }),
      WorkflowNotFoundError,
    );
    assert.equal(requestsOf(h.sim, { projectId, route: 'sendMessage' }).length, 0);
  });
});
