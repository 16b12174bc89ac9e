import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { budgetLimiterWorkflowId, getBudgetStateQuery, type RateBudget } from '../../src/contract/budget';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import { ApiKey } from '../../src/docs-api/api-key';
import { visitorsExport } from '../../src/workflows';
import { useStack } from '../helpers/stack';

// DOCS_API_ANALYTICS_RATE_LIMIT=1000/1h: room for a 200-page export's batches of permits.
const BUDGET: RateBudget = { requests: 1000, windowMs: 3_600_000 };
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
const PAGE_SIZE = 50;

const stack = useStack({
  name: 'budget-export-cancel',
  simulator: { budgets: { analytics: BUDGET } },
  worker: () => ({ budgets: { analytics: BUDGET } }),
});

const visitorRequests = (projectId: string) =>
  stack.sim.requests().filter((r) => r.route === 'getVisitors' && r.projectId === projectId).length;

test('a cancelled export gives its unspent permits back: the next export has the rest of the budget', async () => {
  const { client, sim } = stack;
  sim.configureProject('cancelled', { visitorPaths: 200 * PAGE_SIZE });
  sim.configureProject('next', { visitorPaths: 20 * PAGE_SIZE });
  sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 50, times: 1_000 });
  const limiter = client.workflow.getHandle(
    budgetLimiterWorkflowId('analytics', new ApiKey(sim.apiKey).fingerprint()),
  );
  const start = (projectId: string) =>
    client.workflow.start(visitorsExport, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId: visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo),
      args: [{ projectId, ...RANGE, pageSize: PAGE_SIZE, concurrency: 8 }],
    });

  const cancelled = await start('cancelled');
  while (visitorRequests('cancelled') < 40) await new Promise((resolve) => setTimeout(resolve, 20));
  await cancelled.cancel();
  await assert.rejects(cancelled.result(), WorkflowFailedError);
  // Requests in flight at the cancel may still land: wait until none comes, then count.
  let sent = visitorRequests('cancelled');
  for (let quiet = 0; quiet < 10;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = visitorRequests('cancelled');
    quiet = now === sent ? quiet + 1 : 0;
    sent = now;
  }
  assert.ok(sent < 200, `cancelled mid-flight after ${sent} requests`);
  // The stock came back; only the permits of runs in flight at the cancel stay counted (a request may have gone
  // with each, unseen), a few at most.
  const afterCancel = await limiter.query(getBudgetStateQuery);
  const kept = afterCancel.grantedInWindow - sent;
  assert.ok(kept >= 0 && kept <= 8, `${afterCancel.grantedInWindow} permits counted for ${sent} requests`);

  const next = await start('next');
  const result = await next.result();
  assert.equal(result.pages, 20);
  const state = await limiter.query(getBudgetStateQuery);
  assert.deepEqual(state.waitingByProject, {}, 'nobody waits: the budget had room for all of it');
  const counted = state.grantedInWindow - afterCancel.grantedInWindow;
  const requests = visitorRequests('next');
  assert.ok(counted >= requests && counted <= requests + 8, `${counted} permits for ${requests} requests`);
});
