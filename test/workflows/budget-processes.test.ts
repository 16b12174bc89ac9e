import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RateBudget } from '../../src/contract/budget';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import { visitorsExport } from '../../src/workflows';
import { useProcessStack } from '../helpers/stack';

const BUDGET: RateBudget = { requests: 10, windowMs: 5_000 };
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

const stack = useProcessStack({
  name: 'budget-processes',
  simulator: { budgets: { analytics: BUDGET } },
  workerEnv: { DOCS_API_ANALYTICS_RATE_LIMIT: '10/5s' },
  workers: 2,
});

describe('two worker processes', () => {
  test('share one analytics budget: 6 exports, 30 pages, no 429, pages fetched by both', async () => {
    const { client, sim } = stack;
    const handles = await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        const projectId = `shared-${i}`;
        sim.configureProject(projectId, { visitorPaths: 230 });
        return client.workflow.start(visitorsExport, {
          taskQueue: DEFAULT_TASK_QUEUE,
          workflowId: visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo),
          args: [{ projectId, ...RANGE, pageSize: 50 }],
        });
      }),
    );
    const started = Date.now();
    const results = await Promise.all(handles.map((handle) => handle.result()));
    const ms = Date.now() - started;
    for (const result of results) assert.equal(result.rows, 230);
    assert.equal(sim.stats().budgetRefusals.analytics, 0, 'no 429: both processes kept one budget');
    const requests = sim.requests().filter((r) => r.route === 'getVisitors').length;
    // One past the end and the end check's read of page 0 again, per export.
    assert.ok(requests <= 30 + 6 + 6, `${requests} requests for 30 pages`);
    const identities = new Set<string>();
    for (const handle of handles) {
      for (const event of (await handle.fetchHistory()).events ?? []) {
        const identity = event.activityTaskStartedEventAttributes?.identity;
        if (identity) identities.add(identity);
      }
    }
    assert.ok(identities.size >= 2, `activities ran in ${[...identities].join(', ')}`);
    console.log(`# two processes: 30 pages, ${requests} requests, ${ms} ms, 0 x 429`);
  });
});
