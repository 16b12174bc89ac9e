import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { budgetLimiterWorkflowId, getBudgetStateQuery, type RateBudget } from '../../src/contract/budget';
import { getProgressQuery } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportResult } from '../../src/contract/visitors-export';
import { ApiKey } from '../../src/docs-api/api-key';
import { docsBudgetLimiter, visitorsExport } from '../../src/workflows';
import { useStack } from '../helpers/stack';

// The service's 100 per hour, compressed: 20 requests per 10 s window.
const BUDGET: RateBudget = { requests: 20, windowMs: 10_000 };
/** The limiter's window: the budget's, padded by 1 s (its least padding) for the delay from grant to request. */
const PADDED_WINDOW_MS = BUDGET.windowMs + 1_000;
const PAGE_SIZE = 50;
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

const stack = useStack({
  name: 'budget-exports',
  simulator: { budgets: { analytics: BUDGET } },
  worker: () => ({ budgets: { analytics: BUDGET } }),
});
let runs = 0;

function startExport(projectId: string, paths: number) {
  const { client, sim } = stack;
  sim.configureProject(projectId, { visitorPaths: paths });
  return client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: `${visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo)}/${++runs}`,
    args: [{ projectId, ...RANGE, pageSize: PAGE_SIZE }],
  });
}

/** A permit message's fields, decoded as the worker's data converter encoded them. */
function payloadOf(payload: Payload | null | undefined): { permitId?: string; requesterRunId?: string } {
  return payload ? defaultPayloadConverter.fromPayload(payload) : {};
}

function visitorRequests(projectId: string) {
  return stack.sim.requests().filter((r) => r.route === 'getVisitors' && r.projectId === projectId);
}

/** The least time `pages` requests take within the limiter's windows: every window but the last is waited out. */
function budgetBoundMs(pages: number): number {
  return (Math.ceil(pages / BUDGET.requests) - 1) * PADDED_WINDOW_MS;
}

/** The night starts with the whole budget: the grants of earlier tests have left the (padded) window. */
function quietBudget(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, PADDED_WINDOW_MS));
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

describe('exports within the organization analytics budget (20 per 10 s)', () => {
  test('the limiter continues as new with permits waiting: every export completes, one request each', async () => {
    const { client, sim } = stack;
    const limiter = await client.workflow.start(docsBudgetLimiter, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId: budgetLimiterWorkflowId('analytics', new ApiKey(sim.apiKey).fingerprint()),
      args: [{ budget: BUDGET, continueAsNewAfterEvents: 50 }],
    });
    const handles = await Promise.all(Array.from({ length: 16 }, (_, i) => startExport(`small-${i}`, 30)));
    const results = await Promise.all(handles.map((handle) => handle.result()));
    assert.deepEqual(
      results.map((r) => r.rows),
      results.map(() => 30),
    );
    assert.equal(sim.requests().filter((r) => r.route === 'getVisitors').length, 16);
    assert.equal(sim.stats().budgetRefusals.analytics, 0);
    const current = await client.workflow.getHandle(limiter.workflowId).describe();
    assert.notEqual(current.runId, limiter.firstExecutionRunId, 'the limiter continued as new');
    const state = await client.workflow.getHandle(limiter.workflowId).query(getBudgetStateQuery);
    assert.deepEqual(state.waitingByProject, {});
    assert.equal(state.granted, 16, 'one grant per page, counted across the limiter runs');
    // The UI's current details: set again by every run, so the continued run explains itself.
    const { currentDetails = '' } = await client.workflow
      .getHandle(limiter.workflowId)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    const [heading, used, queued] = currentDetails.split('\n');
    assert.equal(heading, "Analytics budget of the organization (every export's pages): 20/10s");
    assert.match(used ?? '', /^\*\*Used in the window:\*\* \d+ of 20 · \*\*Granted:\*\* 16 · /);
    assert.equal(queued, '**Queued:** none');
    sim.reset();
  });

  test('10 projects of mixed sizes: all whole, requests <= pages + 2 each, no 429, wall time near the bound', async () => {
    const { sim } = stack;
    // 62 pages in all: three one-page days and seven longer ones (none an exact multiple of the page size).
    const sizes = [20, 40, 45, 120, 280, 480, 590, 740, 499, 149];
    const pagesOf = (paths: number) => Math.ceil(paths / PAGE_SIZE);
    await quietBudget();
    const before = sim.stats().responsesByStatus['429'] ?? 0;
    const oneDayDone: number[] = [];
    const { value: results, ms } = await timed(async () => {
      const started = Date.now();
      const handles = await Promise.all(sizes.map((paths, i) => startExport(`nightly-${i}`, paths)));
      return Promise.all(
        handles.map(async (handle, i) => {
          const result = await handle.result();
          if (pagesOf(sizes[i] ?? 0) === 1) oneDayDone.push(Date.now() - started);
          return result;
        }),
      );
    });
    const pages = sizes.reduce((sum, paths) => sum + pagesOf(paths), 0);
    assert.equal(pages, 62);
    let requests = 0;
    for (const [i, paths] of sizes.entries()) {
      const result = results[i] as VisitorsExportResult;
      assert.equal(result.rows, paths, `nightly-${i} whole`);
      assert.equal(result.pages, pagesOf(paths));
      const sent = visitorRequests(`nightly-${i}`).length;
      requests += sent;
      // One past the end at most, and the end check's read of page 0 again when page 0 is not the last.
      const endCheck = result.pages > 1 ? 1 : 0;
      assert.ok(
        sent <= result.pages + 1 + endCheck,
        `nightly-${i}: ${sent} requests for ${result.pages} pages`,
      );
      if (result.pages === 1) assert.equal(sent, 1, 'a day that fits one page costs exactly one request');
    }
    const refused = (sim.stats().responsesByStatus['429'] ?? 0) - before;
    assert.ok(refused <= requests * 0.01, `${refused} x 429 of ${requests} requests`);
    const bound = budgetBoundMs(pages);
    assert.ok(ms <= bound * 1.15, `${ms} ms for ${pages} pages (${requests} requests); bound ${bound} ms`);
    // Fair: the one-page days are not queued behind the 15-page export.
    assert.ok(
      Math.max(...oneDayDone) < BUDGET.windowMs,
      `one-page days done after ${oneDayDone.join(', ')} ms`,
    );
    console.log(
      `# 10 exports: ${pages} pages, ${requests} requests, ${refused} x 429, ${ms} ms (bound ${bound} ms)`,
    );
  });

  test('permits asked by a terminated run are not handed to the next run of its workflow id', async () => {
    const { client, sim } = stack;
    sim.reset();
    await quietBudget();
    const projectId = 'rerun';
    sim.configureProject(projectId, { visitorPaths: 30 * PAGE_SIZE });
    const workflowId = visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo);
    const start = () =>
      client.workflow.start(visitorsExport, {
        taskQueue: DEFAULT_TASK_QUEUE,
        workflowId,
        args: [{ projectId, ...RANGE, pageSize: PAGE_SIZE }],
      });
    const first = await start();
    // The window's 20 permits spent, the first run waits with asks queued at the limiter: terminate it there.
    while (visitorRequests(projectId).length < BUDGET.requests) await new Promise((r) => setTimeout(r, 50));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await first.terminate('operator');
    const second = await start();
    assert.equal((await second.result()).rows, 30 * PAGE_SIZE);
    assert.equal(sim.stats().budgetRefusals.analytics, 0);

    // The limiter's history: the first run's asks, and what became of their grants.
    const limiterId = budgetLimiterWorkflowId('analytics', new ApiKey(sim.apiKey).fingerprint());
    const limiterEvents = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${limiterId}'` })) {
      const history = await client.workflow.getHandle(limiterId, run.runId).fetchHistory();
      limiterEvents.push(...(history.events ?? []));
    }
    const firstAsks = new Set(
      limiterEvents
        .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'requestBudgetPermit')
        .map((e) => payloadOf(e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]))
        .filter((ask) => ask.requesterRunId === first.firstExecutionRunId)
        .map((ask) => ask.permitId),
    );
    const failedSignals = new Set(
      limiterEvents.map((e) =>
        e.signalExternalWorkflowExecutionFailedEventAttributes?.initiatedEventId?.toString(),
      ),
    );
    const undelivered = limiterEvents.filter((e) => {
      const attributes = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      return (
        attributes?.signalName === 'budgetPermitGranted' &&
        firstAsks.has(payloadOf(attributes.input?.payloads?.[0]).permitId) &&
        failedSignals.has(e.eventId?.toString())
      );
    });
    assert.ok(undelivered.length > 0, 'a grant for the terminated run was sent to that run, and failed');
    const heard = ((await second.fetchHistory()).events ?? [])
      .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'budgetPermitGranted')
      .map((e) => payloadOf(e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]).permitId);
    assert.ok(heard.length > 0);
    assert.deepEqual(
      heard.filter((permitId) => firstAsks.has(permitId)),
      [],
      "the second run heard none of the first run's grants",
    );
  });

  test("a cancelled export's waiting asks are withdrawn: no grant goes to it once it has ended", async () => {
    const { client, sim } = stack;
    sim.reset();
    await quietBudget();
    const projectId = 'withdrawn';
    const cancelled = await startExport(projectId, 30 * PAGE_SIZE);
    while (visitorRequests(projectId).length < BUDGET.requests) await new Promise((r) => setTimeout(r, 50));
    const limiter = client.workflow.getHandle(
      budgetLimiterWorkflowId('analytics', new ApiKey(sim.apiKey).fingerprint()),
    );
    let details = '';
    for (let tries = 0; !details.includes(cancelled.workflowId) && tries < 100; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      ({ currentDetails: details = '' } = await limiter.query<{ currentDetails?: string }>(
        '__temporal_workflow_metadata',
      ));
    }
    assert.match(
      details,
      new RegExp(
        `^\\*\\*Queued:\\*\\* \\d+ permits \\(by project: withdrawn \\d+\\) · \\*\\*Requesters:\\*\\* ${cancelled.workflowId}$`,
        'm',
      ),
    );
    await cancelled.cancel();
    await assert.rejects(cancelled.result());
    // A window later, the limiter would have granted whatever still waited for the export.
    await quietBudget();
    assert.deepEqual((await limiter.query(getBudgetStateQuery)).waitingByProject, {});
    const failed = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${limiter.workflowId}'` })) {
      const history = await client.workflow.getHandle(limiter.workflowId, run.runId).fetchHistory();
      failed.push(
        ...(history.events ?? []).filter(
          (e) =>
            e.signalExternalWorkflowExecutionFailedEventAttributes?.workflowExecution?.runId ===
            cancelled.firstExecutionRunId,
        ),
      );
    }
    assert.deepEqual(failed, [], 'no signal to the cancelled export failed');
  });

  test('a foreign spender takes the budget (429 without Retry-After): no failure, few 429s, progress says it waits', async () => {
    const { sim } = stack;
    sim.configureBudgets({ analytics: { ...BUDGET, retryAfter: false } });
    sim.reset();
    const spender = setInterval(() => sim.spendBudget('analytics', BUDGET.requests), 250);
    const stopSpending = setTimeout(() => clearInterval(spender), 25_000);
    try {
      const { value, ms } = await timed(async () => {
        const [a, b] = await Promise.all([
          startExport('foreign-a', 590),
          startExport('foreign-b', 590),
        ] as const);
        let sawWait = '';
        const queries: Promise<void>[] = [];
        const watch = setInterval(() => {
          queries.push(
            a
              .query(getProgressQuery)
              .then((p) => {
                if (p.waitingForBudgetUntil !== undefined) sawWait = p.waitingForBudgetUntil;
              })
              .catch(() => undefined),
          );
        }, 500);
        try {
          return { results: await Promise.all([a.result(), b.result()]), sawWait };
        } finally {
          clearInterval(watch);
          // A query still in flight would be retried once the connection closed, failing the file.
          await Promise.all(queries);
        }
      });
      for (const result of value.results) assert.equal(result.rows, 590);
      const refused = sim.stats().budgetRefusals.analytics;
      const perMinute = refused / Math.max(1, ms / 60_000);
      assert.ok(perMinute < 10, `${refused} x 429 in ${ms} ms`);
      assert.match(value.sawWait, /^\d{4}-\d{2}-\d{2}T/, 'getProgress said until when it waits for budget');
      console.log(`# foreign spender: 2 x 12 pages in ${ms} ms, ${refused} x 429 without Retry-After`);
    } finally {
      clearInterval(spender);
      clearTimeout(stopSpending);
      sim.configureBudgets({ analytics: BUDGET });
    }
  });
});
