import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  agentJobStartOptions,
  awaitAgentJob,
  followUpAnyState,
  getAgentJobState,
  sendFollowUp,
  sendFollowUpAndWait,
  startAgentJob,
} from '../../src/client/agent-job';
import {
  FOLLOW_UP_LIMITS,
  FollowUpFailureType,
  SentFollowUpLedger,
  type AgentJobContinuation,
  type AgentJobInput,
  type AgentJobState,
} from '../../src/contract/agent-job';
import { followUpSignal, sendFollowUpUpdate } from '../../src/contract/messages';
import { AgentJobIdKey, WorkflowType } from '../../src/contract/names';
import { MAX_PROMPT_CHARS } from '../../src/contract/validation';
import { startTestWorker } from '../../dev/worker';
import {
  activitiesScheduled,
  eventTypes,
  eventually,
  continuedAsNewInput,
  requestsOf,
  useAgentJobStack,
  projectWithJobs,
  startJob,
  TEST_POLLING,
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

  test('a follow-up is sent at once while the one poll activity keeps running; the end is read after it', async () => {
    const { projectId, handle, jobId } = await startLongJob('early', {
      polling: { initialInterval: '1s', backoffCoefficient: 4, maxInterval: '16s', deadline: '2m' },
    });
    // After two reads the poll activity waits 16 s before its next attempt.
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
    assert.equal(
      await activitiesScheduled(handle, 'pollAgentJob'),
      1,
      'the poll was neither cancelled nor restarted',
    );
    h.sim.completeJob(jobId, 'completed');
    const result = await handle.result();
    assert.equal(result.status, 'completed');
    const reads = requestsOf(h.sim, { projectId, route: 'getJob' });
    assert.ok(
      timeOf(reads.at(-1) ?? message) > timeOf(message),
      'the terminal status was read after the message',
    );
  });

  test('a 409 on a follow-up of an active job: one read, then the next follow-up is sent', async () => {
    const { projectId, handle, jobId } = await startLongJob('conflict', {
      polling: { initialInterval: '1s', backoffCoefficient: 4, maxInterval: '16s', deadline: '2m' },
    });
    await readsAtService(projectId, 2);
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 409, times: 1 });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Refused', messageId: 'refused' });
    await sendFollowUp(h.client, handle.workflowId, { prompt: 'Taken', messageId: 'taken' });
    const state = await stateWhen(handle.workflowId, 'both settled', (s) =>
      s.followUps.every((f) => f.status !== 'pending'),
    );
    assert.deepEqual(
      state.followUps.map((f) => [f.messageId, f.status]),
      [
        ['refused', 'rejected'],
        ['taken', 'delivered'],
      ],
    );
    const [refused, taken] = requestsOf(h.sim, { projectId, route: 'sendMessage' });
    assert.ok(refused && taken);
    const between = requestsOf(h.sim, { projectId, route: 'getJob' }).filter(
      (r) => timeOf(r) > timeOf(refused) && timeOf(r) < timeOf(taken),
    );
    assert.equal(between.length, 1, 'the job was read once between them');
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
    assert.ok(reopened.pollingSince !== null, 'polling goes on');
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
    const stateAfterRefusal = await getAgentJobState(h.client, handle.workflowId);
    assert.deepEqual(
      stateAfterRefusal.followUps.map((f) => [f.messageId, f.status]),
      [
        ['faq', 'delivered'],
        ['no', 'rejected'],
      ],
    );
    // Refused by the service, so never taken: the same id is sent again once asked again.
    await sendFollowUpAndWait(h.client, handle.workflowId, {
      prompt: 'Refused by the service',
      messageId: 'no',
    });
    h.sim.completeJob(jobId, 'completed');
    const result = await handle.result();
    assert.deepEqual(
      result.followUps.map((f) => [f.messageId, f.status]),
      [
        ['faq', 'delivered'],
        ['no', 'delivered'],
      ],
    );
    assert.deepEqual(sentPrompts(jobId), ['Add a FAQ entry', 'Refused by the service']);
  });
});

describe('agentJob: an accepted update is answered however the run ends', () => {
  test('cancelled before its input check ended, an accepted update fails FollowUpNotSent', async () => {
    // Start, cancel and the update all wait for the first workflow task (no worker polls this queue yet), so the
    // run cancels while its input check runs, with the update already accepted.
    const taskQueue = `agent-job-early-cancel-${process.pid}`;
    const projectId = uniqueProject('early-cancel');
    const handle = await startAgentJob(
      h.client,
      { projectId, prompt: 'Cancelled at once', polling: TEST_POLLING },
      { key: 'k', taskQueue },
    );
    await handle.cancel();
    const update = sendFollowUpAndWait(
      h.client,
      handle.workflowId,
      { prompt: 'Never sent', messageId: 'm1' },
      { updateId: 'early-update' },
    );
    // The update request reaches the server well within this; the server holds it for the first workflow task.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const worker = await startTestWorker(h.env, { service: h.sim, taskQueue });
    try {
      await assert.rejects(update, (error: unknown) => {
        assert.ok(error instanceof WorkflowUpdateFailedError, inspect(error));
        assert.ok(error.cause instanceof ApplicationFailure, inspect(error.cause));
        assert.equal(error.cause.type, FollowUpFailureType.notSent);
        assert.match(error.cause.message, /^follow-up m1: not sent: workflow cancelled$/);
        return true;
      });
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
    } finally {
      await worker.stop();
    }
    const { events } = await handle.fetchHistory();
    const completed = (events ?? []).flatMap((event) => {
      const attributes = event.workflowExecutionUpdateCompletedEventAttributes;
      return attributes ? [attributes] : [];
    });
    assert.deepEqual(
      completed.map((c) => [c.meta?.updateId, c.outcome?.failure?.applicationFailureInfo?.type]),
      [['early-update', FollowUpFailureType.notSent]],
      'the update closed in history with its typed failure',
    );
    assert.equal(requestsOf(h.sim, { projectId }).length, 0, 'nothing reached the service');
  });
});

describe('agentJob: after the workflow closed', () => {
  test('a follow-up continues the same service job in a new run of the same workflow id, polled the same way', async () => {
    const projectId = projectWithJobs(h.sim, 'closed', 1500);
    const polling = { initialInterval: '1s', maxInterval: '3s', backoffCoefficient: 1.5, deadline: '3m' };
    const handle = await startJob(h.client, { projectId, prompt: 'First pass', polling });
    const first = await handle.result();
    const firstRunId = (await handle.describe()).runId;

    const delivery = await followUpAnyState(h.client, handle.workflowId, {
      prompt: 'Second pass',
      messageId: 'second',
    });
    const startedAt = Date.now();
    const state = await eventually(
      () => getAgentJobState(h.client, handle.workflowId).catch(() => undefined),
      'the new run to answer',
    );
    assert.ok(Math.abs(Date.parse(state.deadlineAt) - (startedAt + 180_000)) < 10_000, state.deadlineAt);
    assert.deepEqual(
      state.polling,
      { initialInterval: 1000, maxInterval: 3000, backoffCoefficient: 1.5, deadline: 180_000 },
      "the closed run's polling",
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

describe("agentJob: once per messageId for the job's whole life", () => {
  const prompt = (messageId: string) => `Follow-up ${messageId}`;
  const sent = (projectId: string, messageId: string) =>
    requestsOf(h.sim, { projectId, route: 'sendMessage' }).filter((r) => r.prompt === prompt(messageId))
      .length;
  const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  const signal = (workflowId: string, messageId: string) =>
    sendFollowUp(h.client, workflowId, { prompt: prompt(messageId), messageId });
  const update = (workflowId: string, messageId: string) =>
    sendFollowUpAndWait(h.client, workflowId, { prompt: prompt(messageId), messageId });

  test('a sent id is not sent again after 530 refusals, continue-as-new and a close; a refused id is sent once there is room', async () => {
    const { projectId, handle, jobId } = await startLongJob('ledger', { continueAsNewAfterEvents: 300 });
    await update(handle.workflowId, 'first');
    // The next message waits 10 s for its Retry-After: 20 follow-ups fill the queue, the next 530 are refused.
    h.sim.faults.add({
      route: 'sendMessage',
      projectId,
      kind: 'rateLimit',
      retryAfter: { seconds: 10 },
      times: 1,
    });
    for (const id of ids('q', FOLLOW_UP_LIMITS.maxPending)) await signal(handle.workflowId, id);
    await Promise.all(ids('r', 530).map((id) => signal(handle.workflowId, id)));
    const full = await getAgentJobState(h.client, handle.workflowId);
    assert.equal(full.notAcceptedFollowUps, 530);
    assert.ok(!full.followUps.some((f) => f.messageId === 'first'), 'no longer listed');
    await stateWhen(handle.workflowId, 'the queue drained', (s) => s.pendingFollowUps === 0);

    await signal(handle.workflowId, 'first');
    await signal(handle.workflowId, 'q3');
    await update(handle.workflowId, 'marker-1');
    assert.ok((await getAgentJobState(h.client, handle.workflowId)).continuedRuns > 0, 'continued as new');
    assert.deepEqual([sent(projectId, 'first'), sent(projectId, 'q3')], [1, 1], 'sent ids: not sent again');
    await update(handle.workflowId, 'r5');
    assert.deepEqual(
      [sent(projectId, 'r5'), sent(projectId, 'r6')],
      [1, 0],
      'a refused id: sent once asked again',
    );

    h.sim.completeJob(jobId, 'completed');
    await awaitAgentJob(h.client, handle.workflowId);
    const repeat = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('first'),
      messageId: 'first',
    });
    assert.deepEqual([repeat.earlierStatus, repeat.startedNewRun], ['delivered', false]);
    const refusedBefore = await followUpAnyState(h.client, handle.workflowId, {
      prompt: prompt('r6'),
      messageId: 'r6',
    });
    assert.equal(refusedBefore.startedNewRun, true);
    await signal(handle.workflowId, 'first');
    await update(handle.workflowId, 'marker-2');
    assert.deepEqual(
      ['first', 'q3', 'r5', 'r6'].map((id) => sent(projectId, id)),
      [1, 1, 1, 1],
    );
    await h.client.workflow.getHandle(handle.workflowId).terminate();
  });

  test(`a job takes ${FOLLOW_UP_LIMITS.maxPerJob} follow-ups; past that each is refused, saying so`, async () => {
    const { projectId, handle: creator, jobId } = await startLongJob('bound');
    await creator.terminate();
    const earlier = new SentFollowUpLedger();
    for (let i = 0; i < FOLLOW_UP_LIMITS.maxPerJob - 1; i++) earlier.set(`earlier-${i}`, 'delivered');
    // A run continued from one whose job took all but one follow-up (sending them all would take too long).
    const options = agentJobStartOptions(
      { projectId, prompt: 'Attached', jobId, polling: TEST_POLLING },
      { key: 'bound' },
    );
    const continuation: AgentJobContinuation = {
      ...{ deadlineAt: Date.now() + 600_000, polls: 0, job: null, pollAfterMessage: false, followUps: [] },
      ...{ pendingFollowUps: [], sentFollowUps: earlier.toJSON(), unnamedFollowUps: 0, lastError: null },
      ...{ resendAt: 0, resendAttempt: 0, notAcceptedFollowUps: 0, continuedRuns: 1 },
    };
    const handle = await h.client.workflow.start(WorkflowType.agentJob, {
      ...options,
      args: [{ ...options.args[0], continuation }],
    });
    const notAccepted = (message: RegExp) => (error: unknown) =>
      error instanceof WorkflowUpdateFailedError &&
      error.cause instanceof ApplicationFailure &&
      error.cause.type === FollowUpFailureType.notAccepted &&
      message.test(error.cause.message);

    await assert.rejects(
      update(handle.workflowId, 'earlier-5'),
      notAccepted(/earlier-5 was already received \(status: delivered\)/),
    );
    await update(handle.workflowId, 'last');
    await assert.rejects(
      update(handle.workflowId, 'over'),
      notAccepted(
        new RegExp(
          `^job ${jobId} has taken ${FOLLOW_UP_LIMITS.maxPerJob} follow-ups, the most one job takes; start a new job$`,
        ),
      ),
    );
    await signal(handle.workflowId, 'over-by-signal');
    const state = await stateWhen(
      handle.workflowId,
      'the refused signal',
      (s) => s.notAcceptedFollowUps === 1,
    );
    assert.match(state.followUps.at(-1)?.error ?? '', /has taken 10000 follow-ups/);
    assert.deepEqual(
      requestsOf(h.sim, { projectId, route: 'sendMessage' }).map((r) => r.prompt),
      [prompt('last')],
    );
    await handle.terminate();
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
