import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../src/contract/names';
import { visitorsExport } from '../src/workflows';
import { startProcessStack, type ProcessStack } from '../dev/stack';
import { startWorkerProcess, type WorkerProcess } from '../dev/worker-process';
import { makeCurrentIfVersioned } from '../dev/worker-version';
import { workflowBundlePath } from '../dev/workflow-bundle';
import {
  concurrentJobs,
  concurrentJobsTable,
  FOLLOW_UP_LOAD,
  QUICK_FOLLOW_UP_LOAD,
  type ConcurrentJobsOptions,
  type ConcurrentJobsRow,
} from './concurrent-jobs';
import { markdownTable } from './lib/report';
import { median, spread } from './lib/stats';

/** Issue 34's target: a versioned worker within 5% of an unversioned one. */
export const VERSIONING_OVERHEAD_TARGET = 0.05;

/** The versioned worker's environment: what the Temporal Worker Controller injects. */
const VERSIONED_ENV = { TEMPORAL_DEPLOYMENT_NAME: 'bench-docs-agent', TEMPORAL_WORKER_BUILD_ID: 'bench-v1' };
const VERSIONED_QUEUE = 'bench-versioned';
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
/**
 * Unversioned, versioned, unversioned, …: a noisy minute of the shared machine lands on both sides alike. Three
 * pairs: one run's p50 varies by a third from run to run on the same code, so a ratio needs a median of pairs.
 */
const ROUNDS = 3;

export interface VersionedExportOptions {
  paths: number;
  latencyMs: number;
  concurrency: number;
  repeats: number;
}

export const FULL_VERSIONED_EXPORT: VersionedExportOptions = {
  paths: 100_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 3,
};
export const QUICK_VERSIONED_EXPORT: VersionedExportOptions = {
  paths: 5_000,
  latencyMs: 50,
  concurrency: 8,
  repeats: 1,
};

export interface VersioningResult {
  followUps: ConcurrentJobsRow[];
  exportOptions: VersionedExportOptions;
  unversionedSeconds: number[];
  versionedSeconds: number[];
}

const isVersioned = (row: ConcurrentJobsRow): boolean => row.workerEnv.TEMPORAL_DEPLOYMENT_NAME !== undefined;

/**
 * Follow-up latency under load (400 jobs) and export speed at concurrency 8, each by an unversioned worker process
 * and by one that joined a Worker Deployment Version made current, alternating in one run.
 */
export async function versioning(quick: boolean): Promise<VersioningResult> {
  const base: ConcurrentJobsOptions = quick ? QUICK_FOLLOW_UP_LOAD : FOLLOW_UP_LOAD;
  const scenarios = Array.from({ length: ROUNDS }, () => base.scenarios)
    .flat()
    .flatMap((scenario) => [
      scenario,
      { ...scenario, workerEnv: { ...scenario.workerEnv, ...VERSIONED_ENV } },
    ]);
  const followUps = await concurrentJobs({ ...base, scenarios });
  const exportOptions = quick ? QUICK_VERSIONED_EXPORT : FULL_VERSIONED_EXPORT;
  return { followUps, exportOptions, ...(await versionedExport(exportOptions)) };
}

/** The same export by an unversioned worker process and a versioned one, interleaved in every repeat. */
async function versionedExport(
  options: VersionedExportOptions,
): Promise<Pick<VersioningResult, 'unversionedSeconds' | 'versionedSeconds'>> {
  let stack: ProcessStack | undefined;
  let versioned: WorkerProcess | undefined;
  try {
    stack = await startProcessStack({ name: 'bench-versioned-export' });
    versioned = startWorkerProcess({
      temporalAddress: stack.env.address,
      service: stack.sim,
      env: {
        ...VERSIONED_ENV,
        TEMPORAL_TASK_QUEUE: VERSIONED_QUEUE,
        WORKER_WORKFLOW_BUNDLE: await workflowBundlePath({ traced: false }),
      },
    });
    await versioned.ready;
    await makeCurrentIfVersioned(stack.client, VERSIONED_ENV);
    stack.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: options.latencyMs });
    const result = { unversionedSeconds: [] as number[], versionedSeconds: [] as number[] };
    for (let repeat = 0; repeat < options.repeats; repeat += 1) {
      for (const side of ['unversioned', 'versioned'] as const) {
        const projectId = `bench-${side}-${repeat}`;
        stack.sim.configureProject(projectId, { visitorPaths: options.paths });
        const started = performance.now();
        await stack.client.workflow.execute(visitorsExport, {
          taskQueue: side === 'versioned' ? VERSIONED_QUEUE : DEFAULT_TASK_QUEUE,
          workflowId: visitorsExportWorkflowId(projectId, RANGE.dateFrom, RANGE.dateTo),
          args: [{ projectId, ...RANGE, pageSize: 250, concurrency: options.concurrency, format: 'csv' }],
        });
        result[`${side}Seconds`].push((performance.now() - started) / 1000);
      }
    }
    return result;
  } finally {
    await versioned?.kill('SIGTERM');
    await stack?.stop();
  }
}

export function versioningTables(result: VersioningResult): string {
  const { exportOptions: options } = result;
  const unversioned = result.followUps.filter((row) => !isVersioned(row));
  const versioned = result.followUps.filter(isVersioned);
  // Each versioned run against the unversioned run just before it, then the median of those ratios.
  const latencyRatios = versioned.map((row, i) => row.followUpP50Ms / (unversioned[i]?.followUpP50Ms ?? NaN));
  const latencyRatio = median(latencyRatios);
  const exportRatios = result.versionedSeconds.map(
    (v, i) => v / (result.unversionedSeconds[i] ?? Number.NaN),
  );
  const exportRatio = median(exportRatios);
  const target = `within ${(VERSIONING_OVERHEAD_TARGET * 100).toFixed(0)}% of unversioned`;
  const met = (ratio: number) => (Math.abs(ratio - 1) <= VERSIONING_OVERHEAD_TARGET ? 'met' : 'missed');
  const labelled = (row: ConcurrentJobsRow): ConcurrentJobsRow => ({
    ...row,
    workerEnv: isVersioned(row)
      ? { versioning: 'versioned (current version, PINNED)' }
      : { versioning: 'unversioned' },
  });
  return [
    `The follow-up benchmark's method ("Follow-up latency under load") with a worker process unversioned and one ` +
      `that joined a Worker Deployment Version (\`TEMPORAL_DEPLOYMENT_NAME\`, \`TEMPORAL_WORKER_BUILD_ID\`) made ` +
      `current, alternating, ${ROUNDS} runs of each, in one run.`,
    concurrentJobsTable(result.followUps.map(labelled)),
    `Target: follow-up latency p50, versioned ${target}: **${met(latencyRatio)}** (median of the pairs ` +
      `${latencyRatio.toFixed(2)} x; pairs ${latencyRatios.map((r) => r.toFixed(2)).join(', ')}).`,
    `${options.paths.toLocaleString('en')} paths in pages of 250, ${options.latencyMs} ms on every page, ` +
      `\`concurrency: ${options.concurrency}\`, CSV: per repeat, interleaved, one export by an unversioned worker ` +
      `process and one by a versioned one (its own task queue, its version current), on one dev server and ` +
      `simulator. ${options.repeats} repeat(s): median (min-max); the ratio is per repeat, then the median.`,
    markdownTable(
      ['worker', 'wall (s)', 'vs unversioned'],
      [
        ['unversioned', spread(result.unversionedSeconds, 2), '1.00'],
        ['versioned', spread(result.versionedSeconds, 2), spread(exportRatios, 2)],
      ],
    ),
    `Target: export speed at concurrency ${options.concurrency}, versioned ${target}: ` +
      `**${met(exportRatio)}** (median ${exportRatio.toFixed(2)} x).`,
  ].join('\n\n');
}
