import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../src/contract/names';
import { visitorsExport } from '../src/workflows';
import { startOtlpReceiver } from '../dev/otlp-receiver';
import { startProcessStack, type ProcessStack } from '../dev/stack';
import { startWorkerProcess, type WorkerProcess } from '../dev/worker-process';
import { workflowBundlePath } from '../dev/workflow-bundle';
import { markdownTable } from './lib/report';
import { median, spread } from './lib/stats';
import { TRACING_OVERHEAD_TARGET } from './tracing';

export interface TracedExportOptions {
  paths: number;
  latencyMs: number;
  concurrency: number;
  repeats: number;
}

export const FULL_TRACED_EXPORT: TracedExportOptions = {
  paths: 100_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 3,
};
export const QUICK_TRACED_EXPORT: TracedExportOptions = {
  paths: 5_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 1,
};

const TRACED_QUEUE = 'bench-traced';
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

export interface TracedExportResult {
  options: TracedExportOptions;
  offSeconds: number[];
  onSeconds: number[];
  spans: number;
}

/**
 * The same export (CSV, pages of 250, latency on every page, `concurrency`) by a worker process with tracing off
 * and by one with tracing on (OTLP/HTTP JSON to a receiver in this process, the traced workflow bundle),
 * interleaved in every repeat on one dev server and simulator.
 */
export async function tracedExport(options: TracedExportOptions): Promise<TracedExportResult> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  let stack: ProcessStack | undefined;
  let traced: WorkerProcess | undefined;
  try {
    stack = await startProcessStack({ name: 'bench-traced-export' });
    traced = startWorkerProcess({
      temporalAddress: stack.env.address,
      service: stack.sim,
      env: {
        TEMPORAL_TASK_QUEUE: TRACED_QUEUE,
        WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({ traced: true }),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
    await traced.ready;
    stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
    const result: TracedExportResult = { options, offSeconds: [], onSeconds: [], spans: 0 };
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const tracing of ['off', 'on'] as const) {
        const projectId = `bench-tracing-${tracing}-${repeat}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.paths });
        const started = performance.now();
        await stack.client.workflow.execute(visitorsExport, {
          taskQueue: tracing === 'on' ? TRACED_QUEUE : DEFAULT_TASK_QUEUE,
          workflowId: visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo),
          args: [{ projectId, ...RANGE, pageSize: 250, concurrency: options.concurrency, format: 'csv' }],
        });
        (tracing === 'on' ? result.onSeconds : result.offSeconds).push((performance.now() - started) / 1000);
      }
    }
    // Its shutdown exports the spans still batched (OTEL_BSP_*): count them after it.
    await traced.kill('SIGTERM');
    traced = undefined;
    result.spans = receiver.spanCount();
    return result;
  } finally {
    await traced?.kill('SIGTERM');
    await stack?.stop();
    await receiver.close();
  }
}

export function tracedExportTable(result: TracedExportResult): string {
  const { options } = result;
  const ratios = result.onSeconds.map((on, i) => on / (result.offSeconds[i] ?? Number.NaN));
  const ratio = median(ratios);
  return [
    `${options.paths.toLocaleString('en')} paths in pages of 250, ${options.latencyMs} ms on every page, ` +
      `\`concurrency: ${options.concurrency}\`, CSV: per repeat, interleaved, one export by a worker process with ` +
      `tracing off and one by a worker process with tracing on (OTLP/HTTP JSON to a receiver in the benchmark's ` +
      `process, the traced workflow bundle; ${result.spans.toLocaleString('en')} spans received), on one dev ` +
      `server and simulator. The exports are started by an untraced client, so the traced spans are the ` +
      `activities' and the page requests'. ${options.repeats} repeat(s): median (min-max); the ratio is per ` +
      `repeat, then the median.`,
    markdownTable(
      ['tracing', 'wall (s)', 'vs off'],
      [
        ['off', spread(result.offSeconds, 2), '1.00'],
        ['on (OTLP http/json)', spread(result.onSeconds, 2), spread(ratios, 2)],
      ],
    ),
    `Target: tracing on within ${(TRACING_OVERHEAD_TARGET * 100).toFixed(0)}% of off at concurrency ` +
      `${options.concurrency}: **${Math.abs(ratio - 1) <= TRACING_OVERHEAD_TARGET ? 'met' : 'missed'}** ` +
      `(median ${ratio.toFixed(2)} x).`,
  ].join('\n\n');
}
