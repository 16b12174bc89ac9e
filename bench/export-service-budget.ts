import fs from 'node:fs/promises';
import path from 'node:path';
import { budgetLimiterWorkflowId, DEFAULT_RATE_LIMIT, parseRateLimit } from '../src/contract/budget';
import { ApiKey } from '../src/docs-api/api-key';
import { startProcessStack, type Stack } from '../dev/stack';
import type { WorkerProcess } from '../dev/worker-process';
import { markdownTable } from './lib/report';
import { median, spread } from './lib/stats';
import { PAGE_SIZE, plainRun, RANGE, timedWorkflowExport } from './export-throughput';

export interface ServiceBudgetOptions {
  /** The service's own analytics budget, for the worker and the simulator alike. */
  rateLimit: string;
  pages: number;
  concurrency: number;
  latencyMs: number;
  repeats: number;
}

/** An export that fits in the service's budget: 40 of its 100 requests an hour. */
export const FULL_SERVICE_BUDGET: ServiceBudgetOptions = {
  rateLimit: DEFAULT_RATE_LIMIT,
  pages: 40,
  concurrency: 8,
  latencyMs: 50,
  repeats: 5,
};
export const QUICK_SERVICE_BUDGET: ServiceBudgetOptions = { ...FULL_SERVICE_BUDGET, pages: 8, repeats: 1 };

/** The target: the workflow at most 2 x a plain script at the service's budget. */
export const SERVICE_BUDGET_TARGET = 2;

export interface ServiceBudgetRow {
  options: ServiceBudgetOptions;
  workflowSeconds: number[];
  plainSeconds: number[];
  /** getVisitors requests the workflow sent per repeat (pages, at most concurrency - 1 past the end, page 0 again). */
  workflowRequests: number[];
  refusals: number;
}

/**
 * The export users get: the worker and the simulator both at the service's budget (`100/1h`), each repeat starting
 * with the whole budget (the simulator's windows cleared, the organization's limiter terminated so a new one
 * starts empty), the workflow then a plain undici script at the same concurrency, each with the whole budget.
 */
export async function exportAtServiceBudget(options: ServiceBudgetOptions): Promise<ServiceBudgetRow> {
  const budget = parseRateLimit(options.rateLimit);
  if (budget === undefined) throw new Error(`not a rate limit: ${options.rateLimit}`);
  const stack = await startProcessStack({
    name: 'bench-service-budget',
    simulator: { budgets: { analytics: budget } },
    workerEnv: { DOCS_API_ANALYTICS_RATE_LIMIT: options.rateLimit },
  });
  const row: ServiceBudgetRow = {
    options,
    workflowSeconds: [],
    plainSeconds: [],
    workflowRequests: [],
    refusals: 0,
  };
  try {
    const limiterId = budgetLimiterWorkflowId('analytics', new ApiKey(stack.sim.apiKey).fingerprint());
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      const projectId = `bench-service-budget-${repeat}`;
      await freshBudget(stack, limiterId, projectId, options);
      row.workflowSeconds.push((await timedWorkflowExport(stack, projectId, options.concurrency)).seconds);
      row.workflowRequests.push(stack.sim.requests().filter((r) => r.route === 'getVisitors').length);
      row.refusals += stack.sim.stats().budgetRefusals.analytics;
      await freshBudget(stack, limiterId, projectId, options);
      row.plainSeconds.push((await plainRun(stack, projectId, options.concurrency)).seconds);
      await fs.rm(path.join(stack.exportDir, projectId), { recursive: true, force: true });
    }
    return row;
  } finally {
    await stack.stop();
  }
}

async function freshBudget(
  stack: Stack<WorkerProcess>,
  limiterId: string,
  projectId: string,
  options: ServiceBudgetOptions,
): Promise<void> {
  stack.sim.reset();
  stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
  stack.sim.configureProject(projectId, { visitorPaths: options.pages * PAGE_SIZE });
  stack.sim.warmVisitors(projectId, RANGE.dateFrom, RANGE.dateTo);
  try {
    await stack.client.workflow.getHandle(limiterId).terminate('a fresh budget for the next repeat');
  } catch {
    // No limiter yet.
  }
}

export function serviceBudgetTable(row: ServiceBudgetRow): string {
  const { options } = row;
  const ratios = row.workflowSeconds.map((s, i) => s / (row.plainSeconds[i] ?? Number.NaN));
  return markdownTable(
    [
      'budget',
      'pages',
      'concurrency',
      'workflow (s)',
      'plain undici (s)',
      'workflow / plain',
      'workflow requests',
      '429s',
    ],
    [
      [
        options.rateLimit,
        options.pages,
        options.concurrency,
        spread(row.workflowSeconds, 2),
        spread(row.plainSeconds, 2),
        spread(ratios, 2),
        spread(row.workflowRequests, 0),
        row.refusals,
      ],
    ],
  );
}

export function serviceBudgetVerdict(row: ServiceBudgetRow): string {
  const ratio = median(row.workflowSeconds.map((s, i) => s / (row.plainSeconds[i] ?? Number.NaN)));
  const met = ratio <= SERVICE_BUDGET_TARGET;
  return (
    `Target: an export that fits in the service's budget (${row.options.rateLimit}) at most ` +
    `${SERVICE_BUDGET_TARGET} x a plain script: **${met ? 'met' : 'missed'}** (median ${ratio.toFixed(2)} x).`
  );
}
