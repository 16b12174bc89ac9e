import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  awaitAgentJob,
  followUpAnyState,
  getAgentJobState,
  sendFollowUp,
  sendFollowUpAndWait,
} from '../../src/client/agent-job';
import { FollowUpFailureType, type AgentJobInput, type AgentJobState } from '../../src/contract/agent-job';
import { followUpSignal, sendFollowUpUpdate } from '../../src/contract/messages';
import { AgentJobIdKey } from '../../src/contract/names';
import { MAX_PROMPT_CHARS } from '../../src/contract/validation';
import {
  eventTypes,
  eventually,
  continuedAsNewInput,
  requestsOf,
  useAgentJobStack,
  projectWithJobs,
  startJob,
  timeOf,
  uniqueProject,
} from './agent-job-harness';

const h = useAgentJobStack();

/** A job that stays active until the test completes it with sim.completeJob. */
async function startLongJob(label: string, extra: Partial<AgentJobInput> = {}) {
  const projectId = uniqueProject(label);
  h.sim.configureProject(projectId, { jobs: { durationMs: 600_000, outcome: 'completed' } });
  const handle = await startJob(h.client, { projectId, prompt: `Job for ${label}`, ...extra });
  const { jobId } = await eventually(async () => {
    const state = await getAgentJobState(h.client, handle.workflowId);
    return state.jobId === null ? undefined : { jobId: state.jobId };
  }, 'the job to be created');
  return { projectId, handle, jobId };
}

/** The poll activity's reads are counted by the workflow only when it returns: count them at the service. */
async function readsAtService(projectId: string, reads: number): Promise<void> {
  await eventually(
    () => requestsOf(h.sim, { projectId, route: 'getJob' }).length >= reads,
    `${reads} reads of the job`,
  );
}

async function stateWhen(workflowId: string, what: string, ready: (s: AgentJobState) => boolean) {
  return eventually(async () => {
    const state = await getAgentJobState(h.client, workflowId);
    return ready(state) ? state : undefined;
  }, what);
}

const sentPrompts = (jobId: string) => h.sim.job(jobId)?.messages.map((m) => m.prompt) ?? [];

describe('agentJob: follow-ups by signal', () => {
  test('are delivered in order, once per messageId, with numbered default ids', async () => {
    const { projectId, handle, jobId } = await startLongJob('signals');
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Also the FAQ', messageId: 'faq' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'And the glossary', messageId: 'glossary' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Also the FAQ (again)', messageId: 'faq' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Then the changelog' });
    await stateWhen(
      handle.workflowId,
      'three deliveries',
      (s) => s.followUps.every((f) => f.status === 'delivered') && s.followUps.length === 3,
    );
    h.sim.completeJob(jobId, 'completed');

    const result = await handle.result();

    assert.deepEqual(
      result.followUps.map((f) => [f.messageId, f.status]),
      [
        ['faq', 'delivered'],
        ['glossary', 'delivered'],
        ['followup-1', 'delivered'],
      ],
    );
    assert.deepEqual(sentPrompts(jobId), ['Also the FAQ', 'And the glossary', 'Then the changelog']);
    assert.equal(requestsOf(h.sim, { projectId, route: 'sendMessage' }).length, 3);
    assert.equal(result.status, 'completed');
  });

  test('a follow-up ends the wait between polls early, and polling restarts from initialInterval', async () => {
    const { projectId, handle, jobId } = await startLongJob('early', {
      polling: { initialInterval: '1s', backoffCoefficient: 4, maxInterval: '16s', deadline: '2m' },
    });
    // After two polls (1 s, then 4 s) the poll activity waits 16 s before its next attempt.
    await readsAtService(projectId, 2);
    const signalledAt = Date.now();
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Hurry up', messageId: 'hurry' });
    const [message] = await eventually(() => {
      const found = requestsOf(h.sim, { projectId, route: 'sendMessage' });
      return found.length > 0 ? found : undefined;
    }, 'the message at the service');
    assert.ok(message);
    assert.ok(
      timeOf(message) - signalledAt < 2500,
      `sent ${timeOf(message) - signalledAt} ms after the signal`,
    );
    const nextRead = await eventually(
      () => requestsOf(h.sim, { projectId, route: 'getJob' }).find((r) => timeOf(r) > timeOf(message)),
      'a poll after the message',
    );
    assert.ok(timeOf(nextRead) - timeOf(message) < 2500, 'the interval restarted from 1 s, not 16 s');
    h.sim.completeJob(jobId, 'completed');
    await handle.result();
  });

  test('a follow-up to a job that completed at the service continues it, and it is polled to its end', async () => {
    const { projectId, handle, jobId } = await startLongJob('after-completion', {
      polling: { initialInterval: '1s', backoffCoefficient: 4, maxInterval: '16s', deadline: '2m' },
    });
    await readsAtService(projectId, 2);
    h.sim.completeJob(jobId, 'completed');
    const answer = await sendFollowUpAndWait(h.client, handle.workflowId, {
      prompt: 'One more thing',
      messageId: 'more',
    });
    assert.equal(answer.id, jobId);
    assert.equal(answer.status, 'active', 'the service reopened the completed job');
    const reopened = await stateWhen(
      handle.workflowId,
      'a poll after the message',
      (s) => s.status === 'active',
    );
    assert.ok(reopened.nextPollAt !== null || reopened.pollingSince !== null, 'polling goes on');
    h.sim.completeJob(jobId, 'completed');

    const result = await handle.result();

    assert.equal(result.status, 'completed');
    assert.deepEqual(result.followUps, [
      { messageId: 'more', prompt: 'One more thing', status: 'delivered' },
    ]);
    const lastMessage = requestsOf(h.sim, { projectId, route: 'sendMessage' }).at(-1);
    const lastRead = requestsOf(h.sim, { projectId, route: 'getJob' }).at(-1);
    assert.ok(lastMessage && lastRead && timeOf(lastRead) > timeOf(lastMessage), 'polled after the message');
  });

  test('a refused message is recorded as rejected and the next one proceeds; 5xx after processing is outcome_unknown; 503 is re-sent', async () => {
    const { projectId, handle, jobId } = await startLongJob('refused');
    const settled = (count: number) =>
      stateWhen(
        handle.workflowId,
        `${count} settled follow-ups`,
        (s) => s.pendingFollowUps === 0 && s.followUps.length === count,
      );
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 409, times: 1 });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Refused one', messageId: 'm1' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Accepted one', messageId: 'm2' });
    await settled(2);
    h.sim.faults.add({
      route: 'sendMessage',
      projectId,
      kind: 'status',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Unknown one', messageId: 'm3' });
    await settled(3);
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 503, times: 1 });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Re-sent one', messageId: 'm4' });
    await settled(4);
    h.sim.completeJob(jobId, 'completed');

    const result = await handle.result();

    assert.deepEqual(
      result.followUps.map((f) => [f.messageId, f.status]),
      [
        ['m1', 'rejected'],
        ['m2', 'delivered'],
        ['m3', 'outcome_unknown'],
        ['m4', 'delivered'],
      ],
    );
    assert.match(result.followUps[0]?.error ?? '', /409/);
    assert.deepEqual(
      sentPrompts(jobId),
      ['Accepted one', 'Unknown one', 'Re-sent one'],
      'm3 was processed, never re-sent',
    );
    const m4Requests = requestsOf(h.sim, { projectId, route: 'sendMessage' }).filter(
      (r) => r.prompt === 'Re-sent one',
    );
    assert.deepEqual(
      m4Requests.map((r) => r.status),
      [503, 200],
    );
  });
});

describe('agentJob: follow-ups by update', () => {
  test('returns the job as the service answered; bad follow-ups are refused before anything is sent or recorded', async () => {
    const { projectId, handle, jobId } = await startLongJob('update');
    const refusals: [unknown, RegExp][] = [
      [{ prompt: '' }, /prompt: must not be empty/],
      [
        { prompt: '   ' },
        /prompt: must contain a non-whitespace character \(this project's rule; the service/,
      ],
      [{ prompt: 'x'.repeat(MAX_PROMPT_CHARS + 1) }, /prompt: must be at most/],
      [{ prompt: 'ok', colour: 'red' }, /Unrecognized key/i],
    ];
    for (const [request, message] of refusals) {
      await assert.rejects(
        handle.executeUpdate(sendFollowUpUpdate, { args: [request as { prompt: string }] }),
        (error: unknown) =>
          error instanceof WorkflowUpdateFailedError &&
          error.cause instanceof ApplicationFailure &&
          error.cause.type === FollowUpFailureType.invalidInput &&
          message.test(error.cause.message),
      );
    }
    assert.equal(requestsOf(h.sim, { projectId, route: 'sendMessage' }).length, 0, 'nothing was sent');
    assert.ok(!(await eventTypes(handle)).some((type) => type.includes('UPDATE')), 'nothing entered history');

    const answer = await handle.executeUpdate(sendFollowUpUpdate, {
      args: [{ prompt: 'Add a FAQ entry', messageId: 'faq' }],
    });
    assert.equal(answer.id, jobId);
    assert.equal(answer.status, 'active');
    await assert.rejects(
      handle.executeUpdate(sendFollowUpUpdate, { args: [{ prompt: 'Add a FAQ entry', messageId: 'faq' }] }),
      (error: unknown) =>
        error instanceof WorkflowUpdateFailedError &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === FollowUpFailureType.notAccepted,
      'a messageId already delivered is refused',
    );
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 422, times: 1 });
    await assert.rejects(
      handle.executeUpdate(sendFollowUpUpdate, {
        args: [{ prompt: 'Refused by the service', messageId: 'no' }],
      }),
      (error: unknown) =>
        error instanceof WorkflowUpdateFailedError &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === FollowUpFailureType.rejected,
    );
    h.sim.completeJob(jobId, 'completed');
    const result = await handle.result();
    assert.deepEqual(
      result.followUps.map((f) => [f.messageId, f.status]),
      [
        ['faq', 'delivered'],
        ['no', 'rejected'],
      ],
    );
    assert.deepEqual(sentPrompts(jobId), ['Add a FAQ entry']);
  });
});

describe('agentJob: after the workflow closed', () => {
  test('a follow-up continues the same service job in a new run of the same workflow id', async () => {
    const projectId = projectWithJobs(h.sim, 'closed', 1500);
    const handle = await startJob(h.client, { projectId, prompt: 'First pass' });
    const first = await handle.result();
    const firstRunId = (await handle.describe()).runId;

    const delivery = await followUpAnyState(
      h.client,
      handle.workflowId,
      { prompt: 'Second pass', messageId: 'second' },
      { polling: { initialInterval: '1s', maxInterval: '1s', deadline: '1m' } },
    );
    const again = await followUpAnyState(h.client, handle.workflowId, {
      prompt: 'Second pass',
      messageId: 'second',
    });

    assert.equal(delivery.startedNewRun, true);
    assert.notEqual(delivery.runId, firstRunId);
    assert.equal(delivery.jobId, first.jobId);
    assert.equal(again.startedNewRun, false, 'the new run was running: it was signalled');
    const second = await awaitAgentJob(h.client, handle.workflowId);
    assert.equal(second.jobId, first.jobId);
    assert.equal(second.status, 'completed');
    assert.deepEqual(second.followUps, [{ messageId: 'second', prompt: 'Second pass', status: 'delivered' }]);
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1, 'no second job');
    assert.deepEqual(sentPrompts(first.jobId), ['Second pass'], 'delivered once');
  });
});

describe('agentJob: continue-as-new', () => {
  test('under a low event threshold, pending follow-ups cross runs in order and are delivered once', async () => {
    const { projectId, handle, jobId } = await startLongJob('can', { continueAsNewAfterEvents: 100 });
    const firstRunId = (await handle.describe()).runId;
    // Polls write no events any more: a conversation grows the history (about 20 events per follow-up), to
    // where the three follow-ups below carry it past 100 while the first waits for its Retry-After.
    const warmUps: string[] = [];
    while ((await handle.describe()).historyLength < 80) {
      const id = `w${warmUps.length + 1}`;
      warmUps.push(id);
      await sendFollowUpAndWait(h.client, handle.workflowId, { prompt: `Warm-up ${id}`, messageId: id });
    }
    assert.equal((await handle.describe()).runId, firstRunId, 'still the first run after the warm-ups');
    h.sim.faults.add({
      route: 'sendMessage',
      projectId,
      kind: 'rateLimit',
      retryAfter: { seconds: 10 },
      times: 1,
    });
    for (const id of ['c1', 'c2', 'c3']) {
      await handle.signal(followUpSignal, { prompt: `Follow-up ${id}`, messageId: id });
    }
    await eventually(async () => (await handle.describe()).runId !== firstRunId, 'a continue-as-new');

    const firstRun = h.client.workflow.getHandle(handle.workflowId, firstRunId);
    const carried = await continuedAsNewInput<AgentJobInput>(firstRun);
    assert.ok(carried, 'the first run ended with continue-as-new');
    assert.equal(carried.jobId, jobId);
    assert.deepEqual(
      carried.continuation?.pendingFollowUps.map((p) => p.messageId),
      ['c1', 'c2', 'c3'],
      'the queue crossed the run boundary',
    );
    const firstRunEvents = (await firstRun.describe()).historyLength;
    assert.ok(firstRunEvents <= 130, `first run: ${firstRunEvents} events`);

    await stateWhen(
      handle.workflowId,
      'three deliveries',
      (s) => s.followUps.filter((f) => f.status === 'delivered').length === 3 + warmUps.length,
    );
    h.sim.completeJob(jobId, 'completed');
    const result = await awaitAgentJob(h.client, handle.workflowId);

    assert.deepEqual(
      result.followUps.map((f) => [f.messageId, f.status]),
      [...warmUps, 'c1', 'c2', 'c3'].map((id) => [id, 'delivered']),
    );
    assert.deepEqual(sentPrompts(jobId), [
      ...warmUps.map((id) => `Warm-up ${id}`),
      'Follow-up c1',
      'Follow-up c2',
      'Follow-up c3',
    ]);
    const [limited, ...rest] = requestsOf(h.sim, { projectId, route: 'sendMessage' }).slice(warmUps.length);
    assert.equal(limited?.status, 429);
    assert.ok(
      rest[0] && limited && timeOf(rest[0]) - timeOf(limited) >= 9_900,
      'Retry-After held across runs',
    );
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId], 1);
    const latest = await handle.describe();
    assert.equal(latest.typedSearchAttributes.get(AgentJobIdKey), jobId, 'search attributes carried over');
  });
});
