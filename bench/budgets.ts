import type { Client } from '@temporalio/client';
import { startAgentJob } from '../src/client/agent-job';
import type { Activities } from '../src/activities';
import type { RateBudget } from '../src/contract/budget';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../src/contract/names';
import { visitorsExport } from '../src/workflows';
import type { Simulator } from '../dev/simulator';
import { startStack } from '../dev/stack';
import { eventTimeMs, historyChain } from './lib/history';
import { percentile } from './lib/stats';

export interface BudgetsOptions {
  /** Both budgets of the simulator and the worker, compressed. */
  budget: RateBudget;
  /** Pages of the export whose history gives the cost of a permit (at most one window's worth). */
  costPages: number;
  /** Paths of each export of the budget-bound night (pages of 50). */
  nightPaths: number[];
  /** Jobs started together for one project. */
  jobs: number;
}

export const QUICK_BUDGETS: BudgetsOptions = {
  // Windows of 5 s: a smoke test of the method in half the time; the full run keeps 10 s.
  budget: { requests: 20, windowMs: 5_000 },
  costPages: 20,
  nightPaths: [20, 45, 120, 280, 480, 149],
  jobs: 30,
};

export const FULL_BUDGETS: BudgetsOptions = {
  budget: { requests: 20, windowMs: 10_000 },
  costPages: 20,
  nightPaths: [20, 40, 45, 120, 280, 480, 590, 740, 499, 149],
  jobs: 150,
};

export interface BudgetsRow {
  scenario: string;
  units: string;
  requests: number;
  refused: number;
  wallSeconds: number;
  boundSeconds: number;
  note: string;
}

export interface BudgetsResult {
  permitMedianMs: number;
  permitP90Ms: number;
  pageMedianMs: number;
  eventsPerPage: number;
  rows: BudgetsRow[];
}

const PAGE_SIZE = 50;
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

/**
 * The budgets on a dev server and the simulator, compressed: the cost of a permit (from an export's history:
 * the task that asks to the grant signal, against the page request), a budget-bound night of exports, and a
 * burst of jobs for one project, each against the bound `(ceil(n / requests) - 1) x window`.
 */
export async function budgets(options: BudgetsOptions): Promise<BudgetsResult> {
  const { budget } = options;
  const stack = await startStack({
    name: 'bench-budgets',
    simulator: { budgets: { analytics: budget, agent: budget }, jobs: { durationMs: 200 } },
    worker: () => ({ budgets: { analytics: budget, agent: budget } }),
  });
  try {
    const cost = await permitCost(stack.client, stack.sim, options.costPages);
    await quiet(budget);
    const night = await budgetBoundNight(stack.client, stack.sim, options);
    const burst = await burstOfJobs(stack.client, stack.sim, options);
    return { ...cost, rows: [night, burst] };
  } finally {
    await stack.stop();
  }
}

function bound(count: number, budget: RateBudget): number {
  return ((Math.ceil(count / budget.requests) - 1) * budget.windowMs) / 1000;
}

function quiet(budget: RateBudget): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, budget.windowMs * 1.05));
}

function startExport(client: Client, sim: Simulator, projectId: string, paths: number) {
  sim.configureProject(projectId, { visitorPaths: paths });
  return client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo),
    args: [{ projectId, ...RANGE, pageSize: PAGE_SIZE }],
  });
}

async function permitCost(client: Client, sim: Simulator, pages: number) {
  const handle = await startExport(client, sim, 'cost', pages * PAGE_SIZE - 1);
  const result = await handle.result();
  const { events } = await historyChain(client, handle.workflowId);
  // Asks and grants pair up in order: the limiter grants one project's permits first come, first served.
  const asks: number[] = [];
  const grants: number[] = [];
  const scheduled = new Map<number, number>();
  const pageMs: number[] = [];
  let lastTaskStarted = Number.NaN;
  for (const event of events) {
    const at = eventTimeMs(event);
    if (event.workflowTaskStartedEventAttributes) lastTaskStarted = at;
    const activity =
      localActivityOf(event.markerRecordedEventAttributes) ??
      event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity === PERMIT_ASK_ACTIVITY) asks.push(lastTaskStarted);
    if (event.workflowExecutionSignaledEventAttributes?.signalName === 'budgetPermitGranted') grants.push(at);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchVisitorsPages') {
      scheduled.set(Number(event.eventId), at);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const from = completed ? scheduled.get(Number(completed.scheduledEventId)) : undefined;
    if (from !== undefined) pageMs.push(at - from);
  }
  const permitMs = grants.map((grant, i) => grant - (asks[i] ?? Number.NaN));
  return {
    permitMedianMs: percentile(permitMs, 50),
    permitP90Ms: percentile(permitMs, 90),
    pageMedianMs: percentile(pageMs, 50),
    eventsPerPage: events.length / result.pages,
  };
}

/** The activity through which a workflow asks its limiter for permits: local when the run waits, else not. */
const PERMIT_ASK_ACTIVITY: keyof Activities = 'requestBudgetPermit';

/** The activity type a local activity's marker names (the export's input check is one too, not an ask). */
function localActivityOf(
  marker:
    | { details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null }
    | null
    | undefined,
): string | undefined {
  const data = marker?.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  return (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type;
}

async function budgetBoundNight(
  client: Client,
  sim: Simulator,
  options: BudgetsOptions,
): Promise<BudgetsRow> {
  const refusedBefore = sim.stats().budgetRefusals.analytics;
  const requestsBefore = sim.stats().requests.getVisitors;
  const started = Date.now();
  const handles = await Promise.all(
    options.nightPaths.map((paths, i) => startExport(client, sim, `night-${i}`, paths)),
  );
  const results = await Promise.all(handles.map((handle) => handle.result()));
  const wallSeconds = (Date.now() - started) / 1000;
  const pages = results.reduce((sum, r) => sum + r.pages, 0);
  const requests = sim.stats().requests.getVisitors - requestsBefore;
  const whole = results.every((r, i) => r.rows === options.nightPaths[i]);
  return {
    scenario: `${options.nightPaths.length} exports of mixed sizes at once`,
    units: `${pages} pages`,
    requests,
    refused: sim.stats().budgetRefusals.analytics - refusedBefore,
    wallSeconds,
    boundSeconds: bound(pages, options.budget),
    note: `${(requests / pages).toFixed(2)} requests per page; ${whole ? 'every file whole' : 'ROWS MISSING'}`,
  };
}

async function burstOfJobs(client: Client, sim: Simulator, options: BudgetsOptions): Promise<BudgetsRow> {
  const projectId = 'burst';
  const started = Date.now();
  const handles = [];
  for (let i = 0; i < options.jobs; i++) {
    handles.push(
      await startAgentJob(
        client,
        {
          projectId,
          prompt: `Job ${i}: document the budgets`,
          polling: { initialInterval: '1s', maxInterval: '1s', backoffCoefficient: 1, deadline: '10m' },
        },
        { key: `burst-${i}` },
      ),
    );
  }
  await Promise.all(handles.map((handle) => handle.result()));
  const doneSeconds = (Date.now() - started) / 1000;
  const creates = sim.requests().filter((r) => r.route === 'createJob' && r.status === 201);
  // The budget paces the creates; after the last one the jobs still run and are polled, outside any bound.
  const wallSeconds = (Math.max(...creates.map((r) => r.at)) - started) / 1000;
  const order = creates.map((r) => Number(/^Job (\d+):/.exec(r.prompt ?? '')?.[1]));
  const inversions = order.filter((job, i) => i > 0 && job < (order[i - 1] ?? 0)).length;
  return {
    scenario: `${options.jobs} jobs started together for one project`,
    units: `${options.jobs} jobs`,
    requests: sim.stats().requests.createJob,
    refused: sim.stats().budgetRefusals.agent,
    wallSeconds,
    boundSeconds: bound(options.jobs, options.budget),
    note:
      `created ${sim.stats().jobsCreatedByProject[projectId] ?? 0}, ${inversions} out of order; wall: start to ` +
      `the last create (every job done after ${doneSeconds.toFixed(1)} s)`,
  };
}

export function budgetsTables(result: BudgetsResult, options: BudgetsOptions): string {
  const { requests, windowMs } = options.budget;
  const permitTable = [
    '| permit median (ms) | permit p90 (ms) | page request median (ms) | export events per page |',
    '| -----------------: | --------------: | -----------------------: | ---------------------: |',
    `| ${result.permitMedianMs} | ${result.permitP90Ms} | ${result.pageMedianMs} | ${result.eventsPerPage.toFixed(1)} |`,
  ];
  const runsTable = [
    '| scenario | work | requests | 429s | wall (s) | bound (s) | wall / bound | notes |',
    '| -------- | ---- | -------: | ---: | -------: | --------: | -----------: | ----- |',
    ...result.rows.map(
      (r) =>
        `| ${r.scenario} | ${r.units} | ${r.requests} | ${r.refused} | ${r.wallSeconds.toFixed(1)} | ${r.boundSeconds.toFixed(0)} | ${(r.wallSeconds / r.boundSeconds).toFixed(2)} | ${r.note} |`,
    ),
  ];
  return [
    `Budgets of ${requests} requests per ${windowMs / 1000} s (the service's 100 per hour, compressed) for the ` +
      `simulator and the worker. A permit, from an export's history (${options.costPages} pages, the budget ` +
      `quiet): from the workflow task that asks to the grant signal, against the page request itself ` +
      `(\`fetchVisitorsPages\`, a run of one page, scheduled to completed, no simulated latency).`,
    permitTable.join('\n'),
    `Budget-bound runs (one each); bound: every window but the last waited out, ` +
      `(ceil(n / ${requests}) - 1) x ${windowMs / 1000} s.`,
    runsTable.join('\n'),
  ].join('\n\n');
}
