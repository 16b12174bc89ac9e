import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { awaitAgentJob, followUpAnyState, getAgentJobState, sendFollowUp } from '../../src/client/agent-job';
import { agentJobCreateRecordId, readCreateRecord } from '../../src/client/agent-job-runs';
import { AgentJobResetRefusedError, resetAgentJob, resetPointsOf } from '../../src/client/agent-job-runs';
import {
  AgentJobFailureType,
  FOLLOW_UP_LIMITS,
  type AgentJobContinuation,
  type AgentJobInput,
  type AgentJobResult,
} from '../../src/contract/agent-job';
import { followUpSignal } from '../../src/contract/messages';
import { AgentJobIdKey, DEFAULT_TASK_QUEUE } from '../../src/contract/names';
import { startTestWorker } from '../../dev/worker';
import {
  continuedAsNewInput,
  deleteCreateRecord,
  eventually,
  projectWithJobs,
  requestsOf,
  startJob,
  TEST_POLLING,
  useAgentJobStack,
  workflowFailure,
} from './agent-job-harness';

// Issue 39: what operators do to running jobs (cancel, terminate, reset, resend) loses no job and sends nothing
// twice. Each test counts what the simulator received: creates per key, messages per messageId (each follow-up's
// prompt names its messageId).

const h = useAgentJobStack();
const STARTER = path.resolve(__dirname, '../../src/starter.ts');

const prompt = (messageId: string) => `Follow-up ${messageId}`;

function creates(projectId: string): number {
  return requestsOf(h.sim, { projectId, route: 'createJob' }).length;
}

function sent(projectId: string, messageId: string): number {
  return requestsOf(h.sim, { projectId, route: 'sendMessage' }).filter((r) => r.prompt === prompt(messageId))
    .length;
}

const inFlight = (projectId: string, route: 'createJob' | 'sendMessage') => () =>
  requestsOf(h.sim, { projectId, route }).some((r) => r.status === 0);

async function closed(handle: WorkflowHandle): Promise<string> {
  return eventually(async () => {
    const status = (await handle.describe()).status.name;
    return status === 'RUNNING' ? undefined : status;
  }, 'the run to close');
}

/** `docs-agent <args>` as a user runs it: exit code and output. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      {
        env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default' },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('agentJob under operators: a call the service may have received is never abandoned', () => {
  test('case 1: cancelled while its create is in flight, the job id is kept and the permit released', async () => {
    const projectId = projectWithJobs(h.sim, 'op-cancel-create', 600_000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'latency', latencyMs: 3000, times: 1 });
    const handle = await startJob(h.client, { projectId, prompt: 'Cancelled mid-create' }, 'cancelled');
    await eventually(inFlight(projectId, 'createJob'), 'the create at the service');
    await handle.cancel();
    await assert.rejects(
      handle.result(),
      (error: unknown) => error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure,
    );

    const state = await getAgentJobState(h.client, handle.workflowId);
    assert.ok(state.jobId !== null, 'the cancelled run knows its job');
    assert.equal(h.sim.job(state.jobId)?.projectId, projectId, 'the job the service created');
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1);
    assert.equal((await handle.describe()).typedSearchAttributes.get(AgentJobIdKey), state.jobId);
    assert.match(state.lastError ?? '', new RegExp(`service job ${state.jobId} may still run`));
    const status = await cli('job', 'status', '--workflow-id', handle.workflowId, '--json');
    assert.equal((JSON.parse(status.stdout) as { jobId: string }).jobId, state.jobId, status.stderr);

    // The next create of the project goes at once: the cancelled run's permit was given back.
    const next = await startJob(h.client, { projectId, prompt: 'The next one' }, 'next');
    await eventually(() => creates(projectId) === 2, 'the next create, well before the 90 s hold', 20_000);
    await next.terminate();
  });

  test('case 1: terminated while its create is in flight, `job status` and `job message` find the job', async () => {
    const projectId = projectWithJobs(h.sim, 'op-terminate-create', 600_000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'latency', latencyMs: 3000, times: 1 });
    const handle = await startJob(h.client, { projectId, prompt: 'Terminated mid-create' }, 'terminated');
    await eventually(inFlight(projectId, 'createJob'), 'the create at the service');
    await handle.terminate('operator');

    const record = await eventually(() => readCreateRecord(h.client, handle.workflowId), 'the create record');
    const jobId = record.jobId;
    assert.ok(jobId !== undefined, 'the record names a job');
    assert.equal(h.sim.job(jobId)?.projectId, projectId, 'the record names the job the service created');
    const status = await cli('job', 'status', '--workflow-id', handle.workflowId, '--json');
    assert.equal(status.code, 1, 'a terminated run is a failure to show');
    assert.equal((JSON.parse(status.stdout) as { jobId: string }).jobId, jobId);

    const delivery = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('t1'),
      messageId: 't1',
    });
    assert.equal(delivery.jobId, jobId);
    assert.equal(delivery.startedNewRun, true);
    await eventually(() => sent(projectId, 't1') === 1, 'the follow-up to the same job');
    assert.equal(h.sim.job(jobId)?.messages.length, 1);
    assert.equal(creates(projectId), 1, 'never a second job');
    await h.client.workflow.getHandle(handle.workflowId).terminate();
  });

  test('case 2: cancelled while a follow-up is in flight, it is recorded delivered and never sent again', async () => {
    const projectId = projectWithJobs(h.sim, 'op-cancel-message', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Cancelled mid-message' }, 'message');
    await eventually(async () => (await getAgentJobState(h.client, handle.workflowId)).jobId, 'the job');
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'latency', latencyMs: 3000, times: 1 });
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('y1'), messageId: 'y1' });
    await eventually(inFlight(projectId, 'sendMessage'), 'the message at the service');
    await handle.cancel();
    assert.equal(await closed(handle), 'CANCELLED');

    const state = await getAgentJobState(h.client, handle.workflowId);
    assert.deepEqual(
      state.followUps.map(({ messageId, status }) => ({ messageId, status })),
      [{ messageId: 'y1', status: 'delivered' }],
    );
    const again = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('y1'),
      messageId: 'y1',
    });
    assert.equal(again.earlierStatus, 'delivered');
    assert.equal(again.startedNewRun, false);
    assert.equal(sent(projectId, 'y1'), 1);
  });

  test('case 2: terminated while a follow-up is in flight, its outcome is unknown and it is not sent again', async () => {
    const projectId = projectWithJobs(h.sim, 'op-terminate-message', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Terminated mid-message' }, 'message');
    await eventually(async () => (await getAgentJobState(h.client, handle.workflowId)).jobId, 'the job');
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'latency', latencyMs: 3000, times: 1 });
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('z1'), messageId: 'z1' });
    await eventually(inFlight(projectId, 'sendMessage'), 'the message at the service');
    await handle.terminate('operator');

    const again = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('z1'),
      messageId: 'z1',
    });
    assert.equal(again.earlierStatus, 'outcome_unknown');
    assert.equal(again.startedNewRun, false);
    const next = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('z2'),
      messageId: 'z2',
    });
    assert.equal(next.startedNewRun, true);
    await eventually(() => sent(projectId, 'z2') === 1, 'z2 sent by the new run');
    // The service has it; the run records it delivered once the activity's answer is back.
    const state = await eventually(async () => {
      const current = await getAgentJobState(h.client, handle.workflowId);
      return current.pendingFollowUps === 0 ? current : undefined;
    }, 'z2 settled');
    assert.deepEqual(
      state.followUps.map(({ messageId, status }) => ({ messageId, status })),
      [
        { messageId: 'z1', status: 'outcome_unknown' },
        { messageId: 'z2', status: 'delivered' },
      ],
    );
    assert.equal(sent(projectId, 'z1'), 1, 'z1 reached the service once, by the terminated run');
    await h.client.workflow.getHandle(handle.workflowId).terminate();
  });

  test('case 3: a messageId is delivered once per job across runs (close, then restart)', async () => {
    const projectId = projectWithJobs(h.sim, 'op-across-runs', 2500);
    const handle = await startJob(h.client, { projectId, prompt: 'Across runs' }, 'across');
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('y1'), messageId: 'y1' });
    const first = await handle.result();
    assert.equal(first.followUps[0]?.status, 'delivered');

    const repeat = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('y1'),
      messageId: 'y1',
    });
    assert.deepEqual(
      { earlier: repeat.earlierStatus, started: repeat.startedNewRun },
      { earlier: 'delivered', started: false },
    );
    const next = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('y2'),
      messageId: 'y2',
    });
    assert.equal(next.startedNewRun, true);
    // The new run read y1 from the closed run (earlierFollowUps): a repeat signalled to it is not sent either.
    await followUpAnyState(h.client, handle.workflowId, { prompt: prompt('y1'), messageId: 'y1' });
    const second = await awaitAgentJob(h.client, handle.workflowId);

    assert.deepEqual(
      second.followUps.map(({ messageId, status }) => ({ messageId, status })),
      [
        { messageId: 'y1', status: 'delivered' },
        { messageId: 'y2', status: 'delivered' },
      ],
    );
    assert.deepEqual([sent(projectId, 'y1'), sent(projectId, 'y2')], [1, 1]);
  });

  test('case 3: a run closed before it read the runs before it hides none of their messageIds from the next', async () => {
    const projectId = projectWithJobs(h.sim, 'op-unread-run', 1000);
    // Under an id its caller chose, as another service starts it.
    const handle = await h.client.workflow.start('agentJob', {
      workflowId: `team/a/job-7-${projectId}`,
      taskQueue: DEFAULT_TASK_QUEUE,
      args: [{ projectId, prompt: 'Across three runs', polling: TEST_POLLING }],
    });
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('u1'), messageId: 'u1' });
    await handle.result();
    // A second run whose read of the earlier runs never ends (its worker stalls there), terminated meanwhile.
    const taskQueue = `unread-${process.pid}`;
    const stalled = await startTestWorker(h.env, {
      service: h.sim,
      taskQueue,
      wrapActivities: (activities) => ({
        ...activities,
        earlierFollowUps: () =>
          Context.current()
            .sleep(60_000)
            .then(() => undefined),
      }),
    });
    // Its worker stays: the queries of a closed run go to the run's task queue.
    try {
      const second = await followUpAnyState(
        h.client,
        handle.workflowId,
        { prompt: prompt('u2'), messageId: 'u2' },
        { taskQueue },
      );
      const run2 = h.client.workflow.getHandle(handle.workflowId, second.runId);
      await eventually(
        async () =>
          (await run2.describe()).raw.pendingActivities?.some(
            (activity) => activity.activityType?.name === 'earlierFollowUps',
          ),
        'the second run reading the earlier runs',
      );
      await run2.terminate();
      // And a run closed before its first workflow task (no worker polls its queue): it answers no query.
      const unread = await followUpAnyState(
        h.client,
        handle.workflowId,
        { prompt: prompt('u2'), messageId: 'u2' },
        { taskQueue: `nobody-${process.pid}` },
      );
      await h.client.workflow.getHandle(handle.workflowId, unread.runId).terminate();

      const repeat = await followUpAnyState(h.client, handle.workflowId, {
        prompt: prompt('u1'),
        messageId: 'u1',
      });
      assert.equal(repeat.earlierStatus, 'delivered', 'found in the first run, behind the second');
      // A new run takes the closed run's task queue unless told otherwise: here that run's had no worker.
      const third = await followUpAnyState(
        h.client,
        handle.workflowId,
        { prompt: prompt('u3'), messageId: 'u3' },
        { taskQueue: DEFAULT_TASK_QUEUE },
      );
      assert.equal(third.startedNewRun, true);
      await h.client.workflow
        .getHandle(handle.workflowId)
        .signal(followUpSignal, { prompt: prompt('u1'), messageId: 'u1' });
      const result = await awaitAgentJob(h.client, handle.workflowId);
      assert.deepEqual(
        result.followUps.map(({ messageId, status }) => [messageId, status]),
        [
          ['u1', 'delivered'],
          ['u3', 'delivered'],
        ],
      );
      assert.deepEqual([sent(projectId, 'u1'), sent(projectId, 'u2'), sent(projectId, 'u3')], [1, 0, 1]);
      assert.equal(creates(projectId), 1);
    } finally {
      await stalled.stop();
    }
  });

  test('case 6: a reset that could send a create or a follow-up again is refused; a safe one sends nothing twice', async () => {
    const projectId = projectWithJobs(h.sim, 'op-reset', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Reset me' }, 'reset');
    const { jobId } = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return state.jobId !== null && state.pollingSince !== null ? state : undefined;
    }, 'the job polled');
    const events = (await handle.fetchHistory()).events ?? [];
    const beforeCreate = Number(events.find((event) => event.workflowTaskCompletedEventAttributes)?.eventId);
    await assert.rejects(
      resetAgentJob(h.client, handle.workflowId, { toEventId: beforeCreate }),
      (error: unknown) =>
        error instanceof AgentJobResetRefusedError &&
        new RegExp(`^event ${beforeCreate} precedes the create closed at event \\d+`).test(error.message),
    );
    const first = resetPointsOf(events).safe[0] ?? 0;
    const reads = requestsOf(h.sim, { projectId, route: 'getJob' }).length;
    const reset = await resetAgentJob(h.client, handle.workflowId, { toEventId: first });
    assert.notEqual(reset.resetRunId, reset.runId);
    await eventually(
      () => requestsOf(h.sim, { projectId, route: 'getJob' }).length > reads,
      'the reset run to read its job',
    );
    assert.equal((await getAgentJobState(h.client, handle.workflowId)).jobId, jobId);
    assert.equal(creates(projectId), 1, 'the create is not made again');

    for (const id of ['r1', 'r2'])
      await sendFollowUp(h.client, handle.workflowId, { prompt: prompt(id), messageId: id });
    await eventually(() => sent(projectId, 'r2') === 1, 'both follow-ups sent');
    await eventually(
      async () => (await getAgentJobState(h.client, handle.workflowId)).pendingFollowUps === 0,
      'settled',
    );
    await assert.rejects(
      resetAgentJob(h.client, handle.workflowId, { toEventId: first }),
      (error: unknown) =>
        error instanceof AgentJobResetRefusedError &&
        /precedes the follow-up message closed at event \d+: it may have reached the service/.test(
          error.message,
        ),
    );
    const refused = await cli('job', 'reset', '--workflow-id', handle.workflowId, '--to', String(first));
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /^reset refused: .*; safe points: \d+/m);
    const safe = await cli('job', 'reset', '--workflow-id', handle.workflowId, '--json');
    assert.equal(safe.code, 0, safe.stderr);

    h.sim.completeJob(jobId ?? '', 'completed');
    const result = await awaitAgentJob(h.client, handle.workflowId);
    assert.deepEqual(
      result.followUps.map((f) => f.status),
      ['delivered', 'delivered'],
    );
    assert.deepEqual([creates(projectId), sent(projectId, 'r1'), sent(projectId, 'r2')], [1, 1, 1]);
  });
});

describe('agentJob under operators: callers hear the truth, the history stays bounded', () => {
  test('case 7: `job message` exits 1 and says why when the queue is full; getState counts it', async () => {
    const projectId = projectWithJobs(h.sim, 'op-queue-full', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Busy job' }, 'full');
    await eventually(async () => (await getAgentJobState(h.client, handle.workflowId)).jobId, 'the job');
    // The first follow-up is refused with Retry-After 4 min: the queue stays full however slow the CLI starts.
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'rateLimit', retryAfter: { seconds: 240 } });
    await Promise.all(
      Array.from({ length: FOLLOW_UP_LIMITS.maxPending }, (_, i) =>
        handle.signal(followUpSignal, { prompt: prompt(`q${i}`), messageId: `q${i}` }),
      ),
    );
    const queued = await cli('job', 'message', '--workflow-id', handle.workflowId, '--prompt', 'one more');
    const dropped = await cli(
      'job',
      'message',
      '--workflow-id',
      handle.workflowId,
      '--prompt',
      prompt('over'),
      '--message-id',
      'over',
      '--json',
    );
    assert.equal(dropped.code, 1, dropped.stdout);
    const receipt = JSON.parse(dropped.stdout) as { status: string; reason: string };
    assert.equal(receipt.status, 'rejected');
    assert.match(receipt.reason, /20 follow-ups are already waiting/);
    assert.equal(queued.code, 1, 'the one without an id was refused too, and said so');
    const state = await getAgentJobState(h.client, handle.workflowId);
    assert.equal(state.notAcceptedFollowUps, 2);
    assert.equal(sent(projectId, 'over'), 0);
    await handle.terminate();
  });

  test('case 8: continue-as-new happens between follow-ups while the queue is not empty', async () => {
    const projectId = projectWithJobs(h.sim, 'op-can-queue', 600_000);
    const input: Omit<AgentJobInput, 'polling'> = {
      projectId,
      prompt: 'Many follow-ups',
      continueAsNewAfterEvents: 100,
    };
    const handle = await startJob(h.client, input, 'can');
    const firstRunId = (await handle.describe()).runId;
    await eventually(async () => (await getAgentJobState(h.client, handle.workflowId)).jobId, 'the job');
    const ids = Array.from({ length: FOLLOW_UP_LIMITS.maxPending }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id) => handle.signal(followUpSignal, { prompt: prompt(id), messageId: id })));
    await eventually(
      async () =>
        (await getAgentJobState(h.client, handle.workflowId)).followUps.filter(
          (f) => f.status === 'delivered',
        ).length === ids.length,
      'every follow-up delivered',
      60_000,
    );

    const firstRun = h.client.workflow.getHandle(handle.workflowId, firstRunId);
    const carried = await continuedAsNewInput<{ continuation: AgentJobContinuation }>(firstRun);
    assert.ok(carried, 'the first run continued as new');
    assert.ok(carried.continuation.pendingFollowUps.length > 0, 'with follow-ups still queued');
    assert.ok((await firstRun.describe()).historyLength < 140, 'near its limit of 100 events');
    assert.deepEqual(
      ids.map((id) => sent(projectId, id)),
      ids.map(() => 1),
    );
    await handle.terminate();
  });

  test('case 9: a job failed at the service takes one 409, then a read; the rest are not sent', async () => {
    const projectId = projectWithJobs(h.sim, 'op-failed-job', 1000, 'failed');
    const handle = await startJob(
      h.client,
      {
        projectId,
        prompt: 'Fails at the service',
        polling: { initialInterval: '30s', maxInterval: '30s', deadline: '2m' },
      },
      'failed',
    );
    const { jobId } = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return state.jobId !== null ? state : undefined;
    }, 'the job');
    await eventually(() => h.sim.job(jobId ?? '')?.status === 'failed', 'the job to fail at the service');
    for (const id of ['f1', 'f2', 'f3', 'f4', 'f5']) {
      await handle.signal(followUpSignal, { prompt: prompt(id), messageId: id });
    }
    const failure = await workflowFailure(handle.result());

    assert.equal(failure.type, AgentJobFailureType.jobFailed);
    const messages = requestsOf(h.sim, { projectId, route: 'sendMessage' });
    assert.deepEqual(
      messages.map((r) => r.status),
      [409],
      'one refused message, then none',
    );
    const { followUps } = failure.details?.[0] as { followUps: { status: string }[] };
    assert.deepEqual(
      followUps.map((f) => f.status),
      ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
    );
  });
});

describe('agentJob: one workflow id is one job, whatever the id and whoever starts it', () => {
  const idShapes = ['orders-42-docs', 'b3f1c2de-9a4e-4c1b-8f3e-2d5a7c9e0f11', 'team/a/job-7'];

  test('ids of any shape, also `agent-job/` and `agent-job-created/` ones, each run one job to its PR', async () => {
    const projectId = projectWithJobs(h.sim, 'ids-any', 1000);
    const ids = [...idShapes, `agent-job-created/${projectId}/k`, `svc/agent-job/${projectId}/k`].map(
      (id) => `${id}-${projectId}`,
    );
    // agent-job/<p>/<k> and agent-job-created/<p>/<k> side by side: neither is the other's record.
    ids.push(`agent-job/${projectId}/k`, `agent-job-created/${projectId}/k`);
    const results = await Promise.all(
      ids.map(
        (workflowId) =>
          h.client.workflow.execute('agentJob', {
            workflowId,
            taskQueue: DEFAULT_TASK_QUEUE,
            args: [{ projectId, prompt: `Job under ${workflowId}`, polling: TEST_POLLING }],
          }) as Promise<AgentJobResult>,
      ),
    );
    for (const result of results) assert.match(result.prLink ?? '', /^https:\/\//);
    assert.equal(new Set(results.map((r) => r.jobId)).size, ids.length, 'a job each');
    assert.equal(creates(projectId), ids.length, 'one create each');
  });

  test('an id of the reserved record prefix is refused as InvalidInput, sends nothing, blocks no record', async () => {
    const projectId = projectWithJobs(h.sim, 'ids-reserved', 1000);
    const failure = await workflowFailure(
      h.client.workflow.execute('agentJob', {
        workflowId: agentJobCreateRecordId(projectId),
        taskQueue: DEFAULT_TASK_QUEUE,
        args: [{ projectId, prompt: 'Under a reserved id' }],
      }),
    );
    assert.equal(failure.type, AgentJobFailureType.invalidInput);
    assert.match(failure.message, /workflowId: must not be "agentJobCreateRecord:" and 64 hex digits/);
    assert.equal(requestsOf(h.sim, { projectId }).length, 0);

    // The refused run holds the id of the record of a job `<projectId>`: that job still gets its record.
    const job = (await h.client.workflow.execute('agentJob', {
      workflowId: projectId,
      taskQueue: DEFAULT_TASK_QUEUE,
      args: [{ projectId, prompt: 'Under the id whose record id was taken', polling: TEST_POLLING }],
    })) as AgentJobResult;
    assert.equal((await readCreateRecord(h.client, projectId))?.jobId, job.jobId);
    assert.equal(creates(projectId), 1);
  });

  test('a closed key: the same prompt is answered from its record, another is refused as AgentJobKeyInUse', async () => {
    const projectId = projectWithJobs(h.sim, 'ids-reuse', 1000);
    const start = ['job', 'start', '--project', projectId, '--key', 'k', '--initial-interval', '1s'];
    const first = await cli(...start, '--prompt', 'The first prompt', '--wait', '--json');
    assert.equal(first.code, 0, first.stderr);
    const job = JSON.parse(first.stdout) as AgentJobResult;
    assert.equal(job.alreadyCreatedBy, undefined);

    const requestsBefore = requestsOf(h.sim, { projectId }).length;
    const other = await cli(...start, '--prompt', 'Another prompt', '--wait');
    assert.equal(other.code, 1, other.stderr);
    assert.match(
      other.stdout,
      new RegExp(`AgentJobKeyInUse: .*created job ${job.jobId} .*for another prompt`),
    );
    assert.match(
      other.stdout,
      /One workflow id is one job: nothing was sent\. .*new workflow id \(a new --key\)/,
    );
    assert.equal(requestsOf(h.sim, { projectId }).length, requestsBefore, 'nothing reached the service');

    const same = await cli(...start, '--prompt', 'The first prompt', '--wait');
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /already created by run \S+ \(.*\) with this prompt: not created again/);
    assert.match(same.stdout, new RegExp(`job ${job.jobId}: completed`));
    assert.equal(creates(projectId), 1, 'one create in all');
  });

  test("a closed key whose create record is gone: the earlier run's history decides; nothing is created twice", async () => {
    const projectId = projectWithJobs(h.sim, 'ids-record-gone', 1000);
    // Under an id its caller chose, as another service starts it.
    const start = (prompt: string) =>
      h.client.workflow.start('agentJob', {
        workflowId: `orders-42-docs-${projectId}`,
        taskQueue: DEFAULT_TASK_QUEUE,
        args: [{ projectId, prompt, polling: TEST_POLLING }],
      });
    const first = await start('The first prompt');
    const { jobId } = (await first.result()) as AgentJobResult;
    const { runId: firstRunId } = await first.describe();
    await deleteCreateRecord(h.client, first.workflowId);
    const other = await start('Another prompt');
    const refused = await workflowFailure(other.result());
    assert.equal(refused.type, AgentJobFailureType.keyInUse);
    assert.match(
      refused.message,
      new RegExp(`created job ${jobId} of project ${projectId} for another prompt`),
    );

    await deleteCreateRecord(h.client, first.workflowId);
    const same = await start('The first prompt');
    const answered = (await same.result()) as AgentJobResult;
    assert.equal(answered.jobId, jobId);
    assert.equal(answered.alreadyCreatedBy?.runId, firstRunId);
    assert.equal(creates(projectId), 1, 'one create in all');
  });

  test('a create of unknown outcome holds its key, also when its run was cancelled meanwhile', async () => {
    const projectId = projectWithJobs(h.sim, 'ids-unknown', 1000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'latency', latencyMs: 2000, times: 1 });
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 500, afterProcessing: true });
    const input = { projectId, prompt: 'Created, answered 500' };
    const firstRun = await startJob(h.client, input, 'unknown');
    await eventually(inFlight(projectId, 'createJob'), 'the create at the service');
    await firstRun.cancel();
    assert.equal((await workflowFailure(firstRun.result())).type, AgentJobFailureType.createOutcomeUnknown);

    const again = await startJob(h.client, input, 'unknown');
    const failure = await workflowFailure(again.result());
    assert.equal(failure.type, AgentJobFailureType.keyInUse);
    assert.match(failure.message, /sent a create whose outcome is unknown/);
    assert.equal(creates(projectId), 1, 'the job the service created stays the only one');
    const status = await cli('job', 'status', '--project', projectId, '--key', 'unknown');
    assert.match(status.stdout, /after a create of unknown outcome \(run \S+\): a job may exist/);
  });

  test('after a refused run, `job message` still finds the job and its delivered messageIds', async () => {
    const projectId = projectWithJobs(h.sim, 'ids-refused-then-message', 1500);
    const handle = await startJob(h.client, { projectId, prompt: 'The job' }, 'k');
    await sendFollowUp(h.client, handle.workflowId, { prompt: prompt('m1'), messageId: 'm1' });
    const { jobId } = await awaitAgentJob(h.client, handle.workflowId);
    const refused = await startJob(h.client, { projectId, prompt: 'Another job' }, 'k');
    assert.equal((await workflowFailure(refused.result())).type, AgentJobFailureType.keyInUse);

    const resent = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('m1'),
      messageId: 'm1',
    });
    assert.deepEqual([resent.jobId, resent.earlierStatus], [jobId, 'delivered']);
    assert.equal(sent(projectId, 'm1'), 1, 'not sent again');
    const next = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('m2'),
      messageId: 'm2',
    });
    assert.deepEqual([next.jobId, next.startedNewRun], [jobId, true]);
    await eventually(() => sent(projectId, 'm2') === 1, 'the new follow-up to the same job');
    assert.equal(creates(projectId), 1);
  });
});

describe('agentJob under operators: failing reads are visible', () => {
  test('reads failing with 500, non-JSON and a job without id: job status shows the error and next poll', async () => {
    const faults = [
      { kind: 'status', status: 500 },
      { kind: 'malformed', malformed: 'not-json' },
      { kind: 'drift', drift: 'missing-id' },
    ] as const;
    await Promise.all(
      faults.map(async (fault) => {
        const projectId = projectWithJobs(h.sim, `poll-failing-${fault.kind}`, 600_000);
        h.sim.faults.add({ route: 'getJob', projectId, times: 1000, ...fault });
        const handle = await startJob(h.client, {
          projectId,
          prompt: `Unreadable: ${fault.kind}`,
          polling: { ...TEST_POLLING, deadline: '25s' },
        });
        const failing = await eventually(async () => {
          const state = await getAgentJobState(h.client, handle.workflowId);
          return state.lastError !== null && state.nextPollAt !== null ? state : undefined;
        }, `the ${fault.kind} error in the state`);
        assert.match(failing.lastError ?? '', /^reading the job: getJob: /);
        assert.ok(Date.parse(failing.nextPollAt ?? '') > Date.now() - 2000, failing.nextPollAt ?? '');
        // The CLI reads the state again: between two attempts it names the next one, during one it says
        // "polling since"; it is asked until it meets the job between attempts.
        const status = await eventually(async () => {
          const run = await cli('job', 'status', '--workflow-id', handle.workflowId);
          return /next poll: \d{4}-\d\d-\d\dT/.test(run.stdout) ? run : undefined;
        }, `job status naming the next poll of the ${fault.kind} job`);
        assert.match(status.stdout, /last error: reading the job: getJob: /);

        const failure = await workflowFailure(handle.result());
        assert.equal(failure.type, AgentJobFailureType.timedOut);
        assert.match(failure.message, /last service error: getJob: /, 'the deadline failure names the error');
      }),
    );
  });

  test('once a read succeeds again, the error is no longer shown', async () => {
    const projectId = projectWithJobs(h.sim, 'poll-recovers', 600_000);
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 500, times: 2 });
    const handle = await startJob(h.client, { projectId, prompt: 'Unreadable, then readable' });
    await eventually(
      async () => (await getAgentJobState(h.client, handle.workflowId)).lastError !== null,
      'the error in the state',
    );
    const recovered = await eventually(async () => {
      const state = await getAgentJobState(h.client, handle.workflowId);
      return state.polls >= 2 && state.lastError === null ? state : undefined;
    }, 'reads answered, the error gone');
    assert.equal(recovered.status, 'active');
    await handle.terminate();
  });
});
