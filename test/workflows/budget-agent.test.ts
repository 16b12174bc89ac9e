import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sendFollowUp, startAgentJob, type AgentJobHandle } from '../../src/client/agent-job';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyChain } from '../../bench/lib/history';
import { budgetLimiterWorkflowId, type PermitAsk, type RateBudget } from '../../src/contract/budget';
import { getStateQuery } from '../../src/contract/messages';
import { ApiKey } from '../../src/docs-api/api-key';
import { useStack } from '../helpers/stack';
import { eventually, TEST_POLLING } from './agent-job-harness';

// The service's 100 creates and messages per project-hour, compressed: 20 per 5 s.
const BUDGET: RateBudget = { requests: 20, windowMs: 5_000 };
// 150 jobs: 8 windows of budget, a bound of 35 s.
const JOBS = 150;

const stack = useStack({
  name: 'budget-agent',
  simulator: { budgets: { agent: BUDGET }, jobs: { durationMs: 500 } },
  worker: () => ({ budgets: { agent: BUDGET } }),
});

describe("agent jobs within the project's budget (20 creates and messages per 5 s)", () => {
  test(`${JOBS} jobs for one project: created once each, in the order asked, no 429, queued ones say so`, async () => {
    const projectId = 'burst';
    const started = Date.now();
    const handles: AgentJobHandle[] = [];
    for (let i = 0; i < JOBS; i++) {
      handles.push(
        await startAgentJob(
          stack.client,
          {
            projectId,
            prompt: `Job ${i}: document the budgets`,
            polling: { ...TEST_POLLING, deadline: '10m' },
          },
          { key: `burst-${i}` },
        ),
      );
    }
    const last = handles[JOBS - 1] as AgentJobHandle;
    const queued = await eventually(async () => {
      const state = await last.query(getStateQuery);
      return state.queuedForBudget && state.waitingForBudgetUntil !== null ? state : undefined;
    }, 'the last job to say it is queued for budget, and until when');
    assert.equal(queued.jobId, null);
    assert.match(queued.waitingForBudgetUntil ?? '', /^\d{4}-\d{2}-\d{2}T/);

    const results = await Promise.all(handles.map((handle) => handle.result()));
    const ms = Date.now() - started;
    assert.equal(new Set(results.map((r) => r.jobId)).size, JOBS);
    assert.equal(stack.sim.stats().jobsCreatedByProject[projectId], JOBS, 'each job created once');
    assert.equal(stack.sim.stats().budgetRefusals.agent, 0, 'no 429');
    const createdOrder = stack.sim
      .requests()
      .filter((r) => r.route === 'createJob' && r.status === 201)
      .map((r) => Number(/^Job (\d+):/.exec(r.prompt ?? '')?.[1]));
    // FIFO as the limiter received the asks (its history, every run). Jobs started a few milliseconds apart run
    // their first workflow tasks in parallel, so their asks may reach it in another order than they were started.
    const limiterId = budgetLimiterWorkflowId('agent', new ApiKey(stack.sim.apiKey).fingerprint(), projectId);
    const jobOf = new Map(handles.map((handle, i) => [handle.workflowId, i]));
    const askedOrder = (await historyChain(stack.client, limiterId)).events
      .map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((signal) => signal?.signalName === 'requestBudgetPermit')
      .map((signal) => defaultPayloadConverter.fromPayload<PermitAsk>(signal?.input?.payloads?.[0] ?? {}))
      .map((ask) => jobOf.get(ask.requesterId));
    assert.deepEqual(
      [...askedOrder].sort((a, b) => (a ?? -1) - (b ?? -1)),
      Array.from({ length: JOBS }, (_, i) => i),
      'one ask per job',
    );
    assert.deepEqual(createdOrder, askedOrder, 'created in the order the limiter received their asks');
    const bound = (Math.ceil(JOBS / BUDGET.requests) - 1) * BUDGET.windowMs;
    assert.ok(ms >= bound, `${ms} ms: the budget was kept (bound ${bound} ms)`);
    console.log(`# ${JOBS} jobs for one project: ${ms} ms (budget bound ${bound} ms), 0 x 429`);
  });

  test('follow-ups beyond the budget: each sent once, in the order signalled, no 429', async () => {
    const projectId = 'chatty';
    const FOLLOW_UPS = 15;
    stack.sim.configureProject(projectId, { jobs: { durationMs: 600_000 } });
    const handles = await Promise.all(
      ['a', 'b'].map((key) =>
        startAgentJob(
          stack.client,
          {
            projectId,
            prompt: `Job ${key}: answer follow-ups`,
            polling: { ...TEST_POLLING, deadline: '10m' },
          },
          { key: `chatty-${key}` },
        ),
      ),
    );
    const started = Date.now();
    // Two jobs, one create and 15 follow-ups each: 32 requests for a budget of 20 per window.
    for (let i = 0; i < FOLLOW_UPS; i++) {
      for (const handle of handles) {
        await sendFollowUp(stack.client, handle.workflowId, {
          prompt: `${handle.workflowId} #${i}`,
          messageId: `m${i}`,
        });
      }
    }
    const sent = () => stack.sim.requests().filter((r) => r.route === 'sendMessage' && r.processed);
    await eventually(() => sent().length >= 2 * FOLLOW_UPS, 'every follow-up sent', 120_000);
    const ms = Date.now() - started;
    for (const handle of handles) {
      const prompts = sent()
        .map((r) => r.prompt ?? '')
        .filter((prompt) => prompt.startsWith(`${handle.workflowId} #`));
      assert.deepEqual(
        prompts,
        Array.from({ length: FOLLOW_UPS }, (_, i) => `${handle.workflowId} #${i}`),
        'each once, in the order signalled',
      );
    }
    assert.equal(stack.sim.stats().budgetRefusals.agent, 0, 'no 429');
    assert.equal(stack.sim.stats().jobsCreatedByProject[projectId], 2, 'each job created once');
    for (const handle of handles) {
      const { jobId } = await handle.query(getStateQuery);
      assert.ok(jobId !== null);
      stack.sim.completeJob(jobId);
    }
    const results = await Promise.all(handles.map((handle) => handle.result()));
    for (const result of results) {
      assert.equal(result.followUps.filter((f) => f.status === 'delivered').length, FOLLOW_UPS);
    }
    console.log(`# ${2 * FOLLOW_UPS} follow-ups and 2 creates for one project: ${ms} ms, 0 x 429`);
  });
});
