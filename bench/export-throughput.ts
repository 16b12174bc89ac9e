import path from 'node:path';
import { startVisitorsExport } from '../src/client/exports';
import { historyBytes } from '../test/replay/history-json';
import { memoryOf } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { startBenchStack, workerPid, type BenchStack } from './lib/stack';
import { spread } from './lib/stats';
import { plainExport } from './plain-export';

export interface ExportThroughputOptions {
  rows: number;
  latencyMs: number;
  concurrencies: number[];
  repeats: number;
}

export const FULL_EXPORT: ExportThroughputOptions = {
  rows: 100_000,
  latencyMs: 50,
  concurrencies: [1, 4, 8, 16],
  repeats: 3,
};
export const QUICK_EXPORT: ExportThroughputOptions = {
  rows: 2_500,
  latencyMs: 50,
  concurrencies: [1, 4],
  repeats: 1,
};

export interface ExportRow {
  concurrency: number;
  pages: number;
  idealSeconds: number;
  workflowSeconds: number[];
  plainSameSeconds: number[];
  plainSequentialSeconds: number[];
  rows: number[];
  historyEvents: number;
  historyKiB: number;
  workerPeakMiB: number;
}

const PAGE_SIZE = 250;
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
let runs = 0;

async function workflowRun(stack: BenchStack, projectId: string, concurrency: number) {
  const started = performance.now();
  const handle = await startVisitorsExport(stack.client, {
    projectId,
    ...RANGE,
    pageSize: PAGE_SIZE,
    concurrency,
    format: 'ndjson',
  });
  const result = await handle.result();
  const seconds = (performance.now() - started) / 1000;
  let events = 0;
  let bytes = 0;
  for await (const execution of stack.client.workflow.list({
    query: `WorkflowId = '${handle.workflowId}'`,
  })) {
    const history = await stack.client.workflow.getHandle(handle.workflowId, execution.runId).fetchHistory();
    events += history.events?.length ?? 0;
    bytes += historyBytes(history).length;
  }
  return { seconds, rows: result.rows, events, bytes };
}

async function plainRun(stack: BenchStack, projectId: string, concurrency: number) {
  const started = performance.now();
  const { rows } = await plainExport({
    service: stack.sim,
    projectId,
    ...RANGE,
    pageSize: PAGE_SIZE,
    concurrency,
    file: path.join(stack.exportDir, `plain-${projectId}-${concurrency}.ndjson`),
  });
  return { seconds: (performance.now() - started) / 1000, rows };
}

/** Wall time of one export of `rows` paths: the workflow against plain undici scripts and the ideal bound. */
export async function exportThroughput(options: ExportThroughputOptions): Promise<ExportRow[]> {
  const stack = await startBenchStack();
  try {
    stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
    const pages = Math.max(1, Math.ceil(options.rows / PAGE_SIZE));
    const table: ExportRow[] = [];
    for (const concurrency of options.concurrencies) {
      const row: ExportRow = {
        concurrency,
        pages,
        idealSeconds: (Math.ceil(pages / concurrency) * options.latencyMs) / 1000,
        workflowSeconds: [],
        plainSameSeconds: [],
        plainSequentialSeconds: [],
        rows: [],
        historyEvents: 0,
        historyKiB: 0,
        workerPeakMiB: 0,
      };
      for (let repeat = 0; repeat < options.repeats; repeat += 1) {
        runs += 1;
        const projectId = `bench-export-${runs}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.rows });
        // Interleaved in one repeat, so that load on the shared machine hits all three alike.
        const workflow = await workflowRun(stack, projectId, concurrency);
        const same = await plainRun(stack, projectId, concurrency);
        const sequential = await plainRun(stack, projectId, 1);
        row.workflowSeconds.push(workflow.seconds);
        row.plainSameSeconds.push(same.seconds);
        row.plainSequentialSeconds.push(sequential.seconds);
        row.rows.push(workflow.rows, same.rows, sequential.rows);
        row.historyEvents = workflow.events;
        row.historyKiB = workflow.bytes / 1024;
      }
      row.workerPeakMiB = memoryOf(workerPid(stack)).peakMiB;
      table.push(row);
    }
    return table;
  } finally {
    await stack.stop();
  }
}

export function exportTable(rows: ExportRow[]): string {
  return markdownTable(
    [
      'concurrency',
      'pages',
      'ideal bound (s)',
      'workflow (s)',
      'workflow / ideal',
      'plain script, same concurrency (s)',
      'workflow / plain same',
      'plain sequential (s)',
      'history events',
      'history KiB',
      'worker peak RSS (MiB)',
    ],
    rows.map((row) => {
      const ratio = (values: number[], base: number[]) =>
        spread(
          values.map((value, i) => value / (base[i] ?? Number.NaN)),
          2,
        );
      return [
        row.concurrency,
        row.pages,
        row.idealSeconds.toFixed(1),
        spread(row.workflowSeconds),
        ratio(
          row.workflowSeconds,
          row.workflowSeconds.map(() => row.idealSeconds),
        ),
        spread(row.plainSameSeconds),
        ratio(row.workflowSeconds, row.plainSameSeconds),
        spread(row.plainSequentialSeconds),
        row.historyEvents,
        row.historyKiB.toFixed(0),
        row.workerPeakMiB.toFixed(0),
      ];
    }),
  );
}
