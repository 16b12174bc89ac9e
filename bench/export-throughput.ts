import fs from 'node:fs/promises';
import path from 'node:path';
import { startVisitorsExport } from '../src/client/visitors-export';
import { exportProfile, type ExportProfile } from './export-profile';
import { historyChain } from './lib/history';
import { sampleRss } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { startProcessStack, workerPid, type Stack } from '../dev/stack';
import type { WorkerProcess } from '../dev/worker-process';
import { median, spread } from './lib/stats';
import { countCsvRows, plainExport } from './plain-export';

export interface ExportThroughputOptions {
  paths: number;
  latencyMs: number;
  concurrencies: number[];
  repeats: number;
}

export const FULL_EXPORT: ExportThroughputOptions = {
  paths: 100_000,
  latencyMs: 50,
  concurrencies: [1, 4, 8, 16],
  repeats: 5,
};
export const QUICK_EXPORT: ExportThroughputOptions = {
  paths: 2_500,
  latencyMs: 50,
  concurrencies: [1, 4],
  repeats: 1,
};

/** The target: the workflow within 1.25 x the ideal bound at this concurrency. */
export const TARGET_CONCURRENCY = 8;
export const TARGET_RATIO = 1.25;

export const PAGE_SIZE = 250;
export const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

export interface ExportRow {
  concurrency: number;
  pages: number;
  idealSeconds: number;
  workflowSeconds: number[];
  plainSameSeconds: number[];
  plainSequentialSeconds: number[];
  /** Rows in the CSV file each run wrote (the workflow's export file, then the two plain scripts'). */
  fileRows: { workflow: number[]; plainSame: number[]; plainSequential: number[] };
  historyEvents: number[];
  historyBytes: number[];
  runs: number[];
  /** Peak RSS of the worker process while this concurrency's workflow runs went on. */
  workerPeakMiB: number;
  /** Where the time of the median workflow run went. */
  profile: ExportProfile | undefined;
}

let exports = 0;

/** One CSV export of RANGE by the workflow, timed from its start to its result. */
export async function timedWorkflowExport(
  stack: Stack<WorkerProcess>,
  projectId: string,
  concurrency: number,
) {
  const started = performance.now();
  const handle = await startVisitorsExport(stack.client, {
    projectId,
    ...RANGE,
    pageSize: PAGE_SIZE,
    concurrency,
    format: 'csv',
  });
  const result = await handle.result();
  return { seconds: (performance.now() - started) / 1000, handle, result };
}

async function workflowRun(stack: Stack<WorkerProcess>, projectId: string, concurrency: number) {
  const { seconds, handle, result } = await timedWorkflowExport(stack, projectId, concurrency);
  const chain = await historyChain(stack.client, handle.workflowId);
  const exportFile = result.files.find((file) => file.endsWith('.csv'));
  const fileRows = exportFile ? countCsvRows(await fs.readFile(exportFile, 'utf8')) : -1;
  return { seconds, fileRows, chain, profile: exportProfile(chain.events, chain.runs) };
}

/** The same export by the plain undici script at `concurrency`, timed; its file is removed after. */
export async function plainRun(stack: Stack<WorkerProcess>, projectId: string, concurrency: number) {
  const file = path.join(stack.exportDir, `plain-${projectId}-${concurrency}.csv`);
  const started = performance.now();
  const { rows } = await plainExport({
    service: stack.sim,
    projectId,
    ...RANGE,
    pageSize: PAGE_SIZE,
    concurrency,
    file,
  });
  const seconds = (performance.now() - started) / 1000;
  await fs.rm(file);
  return { seconds, rows };
}

/**
 * Wall time of one export of `paths` paths (pages of 250) with `latencyMs` on every page: the workflow on a
 * worker process, a plain undici script at the same concurrency and a sequential one, interleaved in every
 * repeat so that load on the shared machine hits all three alike; and the ideal bound.
 */
export async function exportThroughput(options: ExportThroughputOptions): Promise<ExportRow[]> {
  const stack = await startProcessStack({ name: 'bench' });
  try {
    stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
    const pages = Math.max(1, Math.ceil(options.paths / PAGE_SIZE));
    const table: ExportRow[] = [];
    for (const concurrency of options.concurrencies) {
      const row: ExportRow = {
        concurrency,
        pages,
        idealSeconds: (Math.ceil(pages / concurrency) * options.latencyMs) / 1000,
        workflowSeconds: [],
        plainSameSeconds: [],
        plainSequentialSeconds: [],
        fileRows: { workflow: [], plainSame: [], plainSequential: [] },
        historyEvents: [],
        historyBytes: [],
        runs: [],
        workerPeakMiB: 0,
        profile: undefined,
      };
      const profiles: ExportProfile[] = [];
      for (let repeat = 0; repeat < options.repeats; repeat += 1) {
        exports += 1;
        const projectId = `bench-export-${exports}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.paths });
        // Neither the workflow nor the scripts after it pay the simulator's first computation of the range.
        stack.sim.warmVisitors(projectId, RANGE.dateFrom, RANGE.dateTo);
        const rss = sampleRss(workerPid(stack), 100);
        const workflow = await workflowRun(stack, projectId, concurrency);
        row.workerPeakMiB = Math.max(row.workerPeakMiB, rss.stop());
        const same = await plainRun(stack, projectId, concurrency);
        const sequential = await plainRun(stack, projectId, 1);
        row.workflowSeconds.push(workflow.seconds);
        row.plainSameSeconds.push(same.seconds);
        row.plainSequentialSeconds.push(sequential.seconds);
        row.fileRows.workflow.push(workflow.fileRows);
        row.fileRows.plainSame.push(same.rows);
        row.fileRows.plainSequential.push(sequential.rows);
        row.historyEvents.push(workflow.chain.events.length);
        row.historyBytes.push(workflow.chain.bytes);
        row.runs.push(workflow.chain.runs);
        profiles.push(workflow.profile);
        await fs.rm(path.join(stack.exportDir, projectId), { recursive: true, force: true });
      }
      const medianSeconds = median(row.workflowSeconds);
      row.profile = profiles[row.workflowSeconds.indexOf(medianSeconds)];
      table.push(row);
    }
    return table;
  } finally {
    await stack.stop();
  }
}

const ratios = (values: number[], base: number[]) =>
  values.map((value, i) => value / (base[i] ?? Number.NaN));

export function exportTable(rows: ExportRow[]): string {
  return markdownTable(
    [
      'concurrency',
      'pages',
      'ideal bound (s)',
      'workflow (s)',
      'workflow / ideal',
      'plain undici, same concurrency (s)',
      'workflow / plain same',
      'plain undici, sequential (s)',
      'workflow / plain sequential',
      'rows written (workflow, plain, sequential)',
      'history events (runs)',
      'history KiB',
      'worker peak RSS (MiB)',
    ],
    rows.map((row) => [
      row.concurrency,
      row.pages,
      row.idealSeconds.toFixed(2),
      spread(row.workflowSeconds, 2),
      spread(
        ratios(
          row.workflowSeconds,
          row.workflowSeconds.map(() => row.idealSeconds),
        ),
        2,
      ),
      spread(row.plainSameSeconds, 2),
      spread(ratios(row.workflowSeconds, row.plainSameSeconds), 2),
      spread(row.plainSequentialSeconds, 2),
      spread(ratios(row.workflowSeconds, row.plainSequentialSeconds), 2),
      [row.fileRows.workflow, row.fileRows.plainSame, row.fileRows.plainSequential]
        .map((counts) => median(counts).toLocaleString('en'))
        .join(', '),
      `${median(row.historyEvents).toLocaleString('en')} (${median(row.runs)})`,
      (median(row.historyBytes) / 1024).toFixed(0),
      row.workerPeakMiB.toFixed(0),
    ]),
  );
}

/** Where the median run's time went, per concurrency. */
export function exportProfileTable(rows: ExportRow[]): string {
  const ms = (value: number | undefined) =>
    value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(0);
  return markdownTable(
    [
      'concurrency',
      'start to first page (ms)',
      'pages (ms)',
      'merge (ms)',
      'merge to closed (ms)',
      'page runs (activities)',
      'per page activity: queued (ms)',
      'per page activity: running (ms)',
      'completed to next scheduled (ms)',
      'no page activity open (ms)',
    ],
    rows.map((row) => [
      row.concurrency,
      ms(row.profile?.startMs),
      ms(row.profile?.pagesMs),
      ms(row.profile?.mergeMs),
      ms(row.profile?.finishMs),
      row.profile?.pageActivities ?? '-',
      ms(row.profile?.pageQueueMs),
      ms(row.profile?.pageRunMs),
      ms(row.profile?.pageTurnaroundMs),
      ms(row.profile?.pagesIdleMs),
    ]),
  );
}

/** Whether the workflow is within TARGET_RATIO of the ideal bound at TARGET_CONCURRENCY (median of repeats). */
export function exportVerdict(rows: ExportRow[]): string {
  const row = rows.find((r) => r.concurrency === TARGET_CONCURRENCY);
  const ideal =
    row === undefined
      ? `Target (within ${TARGET_RATIO} x the ideal bound at concurrency ${TARGET_CONCURRENCY}): not run.`
      : verdict(
          `within ${TARGET_RATIO} x the ideal bound at concurrency ${TARGET_CONCURRENCY}`,
          median(row.workflowSeconds) / row.idealSeconds,
          TARGET_RATIO,
        );
  const plain = PLAIN_TARGETS.flatMap(({ concurrency, ratio }) => {
    const at = rows.find((r) => r.concurrency === concurrency);
    if (at === undefined) return [];
    const measured = median(ratios(at.workflowSeconds, at.plainSameSeconds));
    return [verdict(`workflow / plain at concurrency ${concurrency} at most ${ratio} x`, measured, ratio)];
  });
  return [ideal, ...plain].join('\n\n');
}

/** The export-speed targets against a plain script at the same concurrency. */
const PLAIN_TARGETS = [
  { concurrency: 8, ratio: 1.2 },
  { concurrency: 1, ratio: 1.1 },
];

function verdict(target: string, measured: number, bound: number): string {
  return `Target: ${target}: **${measured <= bound ? 'met' : 'missed'}** (median ${measured.toFixed(2)} x).`;
}
