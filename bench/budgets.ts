import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../src/contract/names';
import { visitorsExport } from '../src/workflows';
import { installQuietRuntime } from '../dev/temporal';
import { startStack } from '../dev/stack';
import { eventTimeMs, historyChain } from './lib/history';

/**
 * What a permit costs: one export of 50 pages (unbounded budget, so nothing waits for the budget itself) on the
 * dev server. From its history: per page, the permit (from the task that asked to the grant signal) and the
 * page request (the fetchVisitorsPage activity, scheduled to completed). Run: npx tsx bench/budgets.ts
 */
const PAGES = 50;
const PAGE_SIZE = 50;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  installQuietRuntime();
  const stack = await startStack({ name: 'bench-budgets' });
  try {
    stack.sim.configureProject('cost', { visitorPaths: PAGES * PAGE_SIZE - 1 });
    const workflowId = visitorsExportWorkflowId('cost', '2026-11-01', '2026-11-02');
    const started = Date.now();
    const handle = await stack.client.workflow.start(visitorsExport, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId,
      args: [{ projectId: 'cost', dateFrom: '2026-11-01', dateTo: '2026-11-02', pageSize: PAGE_SIZE }],
    });
    const result = await handle.result();
    const wallMs = Date.now() - started;
    const { events } = await historyChain(stack.client, workflowId);

    // Asks and grants pair up in order: the limiter grants one project's permits first come, first served.
    const asks: number[] = [];
    const grants: number[] = [];
    const scheduled = new Map<number, number>();
    const pageMs: number[] = [];
    let lastTaskStarted = Number.NaN;
    for (const event of events) {
      const at = eventTimeMs(event);
      if (event.workflowTaskStartedEventAttributes) lastTaskStarted = at;
      if (event.markerRecordedEventAttributes) asks.push(lastTaskStarted);
      if (event.workflowExecutionSignaledEventAttributes?.signalName === 'budgetPermitGranted')
        grants.push(at);
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchVisitorsPage') {
        scheduled.set(Number(event.eventId), at);
      }
      const completed = event.activityTaskCompletedEventAttributes;
      const from = completed ? scheduled.get(Number(completed.scheduledEventId)) : undefined;
      if (from !== undefined) pageMs.push(at - from);
    }
    const permitMs = grants.map((grant, i) => grant - (asks[i] ?? Number.NaN));
    const requests = stack.sim.requests().filter((r) => r.route === 'getVisitors').length;
    console.log(
      [
        `| pages | requests | permit median (ms) | permit p90 (ms) | page request median (ms) | events per page | wall (s) |`,
        `| ----: | -------: | -----------------: | --------------: | -----------------------: | --------------: | -------: |`,
        `| ${result.pages} | ${requests} | ${median(permitMs)} | ${[...permitMs].sort((a, b) => a - b)[Math.floor(permitMs.length * 0.9)]} | ${median(pageMs)} | ${(events.length / result.pages).toFixed(1)} | ${(wallMs / 1000).toFixed(1)} |`,
      ].join('\n'),
    );
  } finally {
    await stack.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
