import { request } from 'undici';
import { awaitAgentJob, startAgentJob } from '../src/client/agent-job';
import { runVisitorsExport } from '../src/client/visitors-export';
import { DEFAULT_TASK_QUEUE } from '../src/contract/names';
import { freePort } from '../dev/ports';
import { startProcessStack, type ProcessStack } from '../dev/stack';
import { startWorkerProcess, type WorkerProcess } from '../dev/worker-process';
import { workflowBundlePath } from '../dev/workflow-bundle';
import { cpuSecondsOf } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { median, spread } from './lib/stats';

export interface ObservabilityOptions {
  /** Agent jobs per repeat and worker, all in flight at once. */
  jobs: number;
  /** Paths of the export per repeat and worker, in pages of 250. */
  paths: number;
  repeats: number;
}

export const FULL_OBSERVABILITY: ObservabilityOptions = { jobs: 200, paths: 50_000, repeats: 5 };
export const QUICK_OBSERVABILITY: ObservabilityOptions = { jobs: 10, paths: 1_000, repeats: 1 };
/** Metrics and JSON logs may cost at most this much more CPU than neither. */
export const OBSERVABILITY_OVERHEAD_TARGET = 0.03;

const PAGE_SIZE = 250;
const OBSERVED_QUEUE = 'bench-observed';
/** Prometheus's default scrape interval is 1 min; a busy setup scrapes every 15 s. Here: every 5 s. */
const SCRAPE_EVERY_MS = 5_000;

export interface ObservabilityResult {
  options: ObservabilityOptions;
  /** Worker CPU seconds per job and per export page, per repeat. */
  off: { perJob: number[]; perPage: number[] };
  on: { perJob: number[]; perPage: number[] };
}

type Variant = 'off' | 'on';

/**
 * The worker's CPU per agent job and per export page: one worker process with neither metrics nor JSON logs (the
 * defaults), one with `WORKER_METRICS_PORT` (scraped every 5 s), `LOG_FORMAT=json` and `LOG_LEVEL=info`, on one
 * dev server and simulator, each on its own task queue, interleaved in every repeat. CPU is each process's own
 * (user + system, /proc) over its own work.
 */
export async function observabilityOverhead(options: ObservabilityOptions): Promise<ObservabilityResult> {
  let stack: ProcessStack | undefined;
  let observed: WorkerProcess | undefined;
  let scraper: NodeJS.Timeout | undefined;
  try {
    stack = await startProcessStack({
      name: 'bench-observability',
      simulator: { jobs: { durationMs: 3_000 } },
    });
    const metricsPort = await freePort();
    observed = startWorkerProcess({
      temporalAddress: stack.env.address,
      service: stack.sim,
      exportDir: stack.exportDir,
      env: {
        TEMPORAL_TASK_QUEUE: OBSERVED_QUEUE,
        WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({ traced: false }),
        WORKER_METRICS_PORT: String(metricsPort),
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
      },
    });
    await observed.ready;
    const scrape = () =>
      void request(`http://127.0.0.1:${metricsPort}/metrics`).then(
        (r) => r.body.dump(),
        () => undefined,
      );
    scraper = setInterval(scrape, SCRAPE_EVERY_MS);
    const workers: Record<Variant, { pid: number; taskQueue: string }> = {
      off: { pid: stack.worker.child.pid ?? 0, taskQueue: DEFAULT_TASK_QUEUE },
      on: { pid: observed.child.pid ?? 0, taskQueue: OBSERVED_QUEUE },
    };
    const result: ObservabilityResult = {
      options,
      off: { perJob: [], perPage: [] },
      on: { perJob: [], perPage: [] },
    };
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const variant of ['off', 'on'] as const) {
        const { pid, taskQueue } = workers[variant];
        const jobsStart = cpuSecondsOf(pid);
        const handles = await Promise.all(
          Array.from({ length: options.jobs }, (_, i) =>
            startAgentJob(
              stack!.client,
              {
                // The service allows 100 creates per project and hour: at most 90 jobs per project and repeat.
                projectId: `bench-obs-${variant}-${repeat}-${i % Math.ceil(options.jobs / 90)}`,
                prompt: `Job ${i}`,
                polling: { initialInterval: '1s' },
              },
              { key: `${repeat}-${i}`, taskQueue },
            ),
          ),
        );
        await Promise.all(handles.map((handle) => awaitAgentJob(stack!.client, handle.workflowId)));
        result[variant].perJob.push((cpuSecondsOf(pid) - jobsStart) / options.jobs);

        const projectId = `bench-obs-${variant}-${repeat}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.paths });
        const exportStart = cpuSecondsOf(pid);
        const exported = await runVisitorsExport(
          stack.client,
          { projectId, dateFrom: '2026-11-01', dateTo: '2026-11-02', pageSize: PAGE_SIZE, format: 'csv' },
          { taskQueue },
        );
        result[variant].perPage.push((cpuSecondsOf(pid) - exportStart) / exported.pages);
      }
    }
    return result;
  } finally {
    clearInterval(scraper);
    await observed?.kill('SIGTERM');
    await stack?.stop();
  }
}

export function observabilityTable(result: ObservabilityResult): string {
  const { options } = result;
  const ratios = (key: 'perJob' | 'perPage') =>
    result.on[key].map((on, i) => on / (result.off[key][i] ?? NaN));
  const jobRatio = median(ratios('perJob'));
  const pageRatio = median(ratios('perPage'));
  const met = [jobRatio, pageRatio].every((r) => r - 1 <= OBSERVABILITY_OVERHEAD_TARGET);
  const ms = (values: number[]) =>
    spread(
      values.map((v) => v * 1000),
      2,
    );
  return [
    `Per repeat, interleaved: ${options.jobs} agent jobs at once (polled from 1 s, active 3 s at the simulator), ` +
      `then one export of ${options.paths.toLocaleString('en')} paths in pages of ${PAGE_SIZE} (CSV), by a ` +
      `worker process with the defaults (no metrics, text logs) and by one with \`WORKER_METRICS_PORT\` (scraped ` +
      `every ${SCRAPE_EVERY_MS / 1000} s), \`LOG_FORMAT=json\` and \`LOG_LEVEL=info\`, on one dev server and ` +
      `simulator. CPU: the worker process's own (user + system, /proc) over its work. ${options.repeats} ` +
      `repeat(s): median (min-max); ratios per repeat, then the median.`,
    markdownTable(
      ['metrics + JSON logs', 'CPU per job (ms)', 'vs off', 'CPU per export page (ms)', 'vs off'],
      [
        ['off', ms(result.off.perJob), '1.00', ms(result.off.perPage), '1.00'],
        [
          'on',
          ms(result.on.perJob),
          spread(ratios('perJob'), 3),
          ms(result.on.perPage),
          spread(ratios('perPage'), 3),
        ],
      ],
    ),
    `Target: on within ${(OBSERVABILITY_OVERHEAD_TARGET * 100).toFixed(0)}% of off, per job and per page: ` +
      `**${met ? 'met' : 'missed'}** (${jobRatio.toFixed(3)} x per job, ${pageRatio.toFixed(3)} x per page).`,
  ].join('\n\n');
}
