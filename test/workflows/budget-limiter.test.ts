import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { budgetLimiterWorkflowId, getBudgetStateQuery, type RateBudget } from '../../src/contract/budget';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import { ApiKey } from '../../src/docs-api/api-key';
import { docsBudgetLimiter, visitorsExport } from '../../src/workflows';
import type { Simulator } from '../../dev/simulator';
import { startStack, type TestStack } from '../../dev/stack';

const BUDGET: RateBudget = { requests: 5, windowMs: 2_000 };
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

let stack: TestStack;
let client: Client;
let sim: Simulator;
let runs = 0;

before(async () => {
  stack = await startStack({
    name: 'budget-limiter',
    simulator: { budgets: { analytics: { ...BUDGET } } },
    worker: () => ({ budgets: { analytics: BUDGET } }),
  });
  ({ client, sim } = stack);
});
after(() => stack.stop());
afterEach(() => sim.reset());

function limiterId(): string {
  return budgetLimiterWorkflowId('analytics', new ApiKey(sim.apiKey).fingerprint());
}

function startExport(projectId: string) {
  return client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: `${visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo)}/${++runs}`,
    args: [{ projectId, ...RANGE }],
  });
}

describe('the budget limiter workflow', () => {
  test('continues as new with permits waiting: every export completes, never over the budget', async () => {
    const limiter = await client.workflow.start(docsBudgetLimiter, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId: limiterId(),
      args: [{ budget: BUDGET, continueAsNewAfterEvents: 100 }],
    });
    const exports = await Promise.all(
      Array.from({ length: 14 }, (_, i) => {
        sim.configureProject(`small-${i}`, { visitorPaths: 30 });
        return startExport(`small-${i}`);
      }),
    );
    const results = await Promise.all(exports.map((handle) => handle.result()));
    assert.deepEqual(
      results.map((r) => r.rows),
      results.map(() => 30),
    );
    const requests = sim.requests().filter((r) => r.route === 'getVisitors');
    assert.equal(requests.length, 14, 'a day that fits one page costs one request');
    assert.equal(sim.stats().budgetRefusals.analytics, 0);
    let limiterRuns = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = '${limiter.workflowId}'` }))
      limiterRuns += 1;
    assert.ok(limiterRuns >= 2, `the limiter continued as new (${limiterRuns} runs)`);
    const state = await client.workflow.getHandle(limiter.workflowId).query(getBudgetStateQuery);
    assert.deepEqual(state.waitingByProject, {});
    assert.equal(state.granted >= 14, true);
  });
});
