import type { Client } from '@temporalio/client';
import { sendFollowUp, startAgentJob } from '../src/client/agent-jobs';
import type { AgentJobResult, PollingOptions } from '../src/contract/agent-job';
import { agentJobWorkflowId } from '../src/contract/names';
import { cpuSecondsOf, memoryOf, sampleRss } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { startBenchStack, workerPid } from './lib/stack';
import { percentile } from './lib/stats';

export interface ConcurrentJobsOptions {
  sizes: number[];
  /** How long each job stays active at the simulator (the compressed "hours"). */
  jobDurationMs: number;
  followUps: number;
}

export const FULL_JOBS: ConcurrentJobsOptions = {
  sizes: [1000, 2000],
  jobDurationMs: 60_000,
  followUps: 200,
};
export const QUICK_JOBS: ConcurrentJobsOptions = { sizes: [40], jobDurationMs: 8_000, followUps: 10 };

/** Polling compressed like the jobs: 1 s, 2 s, 4 s, then every 5 s. */
const COMPRESSED_POLLING = {
  initialInterval: '1s',
  maxInterval: '5s',
  backoffCoefficient: 2,
  deadline: '1h',
} as const satisfies PollingOptions;

export interface ConcurrentJobsRow {
  jobs: number;
  completed: number;
  startSeconds: number;
  wallSeconds: number;
  workerPeakMiB: number;
  workerCpuSeconds: number;
  followUpP50Ms: number;
  followUpP99Ms: number;
  followUpsDelivered: number;
  detectionP50Ms: number;
  detectionP99Ms: number;
}

async function inBatches<T, R>(items: T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    results.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  }
  return results;
}

async function oneSize(jobs: number, options: ConcurrentJobsOptions): Promise<ConcurrentJobsRow> {
  const stack = await startBenchStack({ jobs: { durationMs: options.jobDurationMs } });
  try {
    const pid = workerPid(stack);
    const client: Client = stack.client;
    const cpuBefore = cpuSecondsOf(pid);
    const rss = sampleRss(pid);
    const started = performance.now();
    const projects = Math.ceil(jobs / 90); // the service allows 100 creates per project-hour
    const ids = Array.from({ length: jobs }, (_, i) => ({
      projectId: `bench-jobs-${i % projects}`,
      key: `j${i}`,
    }));
    await inBatches(ids, 50, ({ projectId, key }) =>
      startAgentJob(
        client,
        { projectId, prompt: `Benchmark job ${key}`, polling: COMPRESSED_POLLING },
        { key },
      ),
    );
    const startSeconds = (performance.now() - started) / 1000;

    const signalled = new Map<string, number>();
    const targets = ids.slice(0, options.followUps);
    const spacing = Math.min(50, options.jobDurationMs / 4 / Math.max(1, targets.length));
    for (const [i, { projectId, key }] of targets.entries()) {
      const prompt = `Benchmark follow-up ${key}`;
      await sendFollowUp(client, agentJobWorkflowId(projectId, key), { prompt, messageId: `f${i}` });
      signalled.set(prompt, Date.now());
      await new Promise((resolve) => setTimeout(resolve, spacing));
    }

    const results = await inBatches(ids, 200, ({ projectId, key }) =>
      client.workflow.getHandle<() => Promise<AgentJobResult>>(agentJobWorkflowId(projectId, key)).result(),
    );
    const closeTimes = await inBatches(
      ids,
      100,
      async ({ projectId, key }) =>
        (
          await client.workflow.getHandle(agentJobWorkflowId(projectId, key)).describe()
        ).closeTime?.getTime() ?? NaN,
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const workerCpuSeconds = cpuSecondsOf(pid) - cpuBefore;
    const workerPeakMiB = Math.max(rss.stop(), memoryOf(pid).peakMiB);

    const followUpLatencies = stack.sim
      .requests()
      .filter((r) => r.route === 'sendMessage' && r.processed && signalled.has(r.prompt ?? ''))
      .map((r) => r.at - (signalled.get(r.prompt ?? '') ?? r.at));
    const detectionLags = results.map((result, i) => {
      const job = stack.sim.job(result.jobId);
      const activeFrom = Math.max(
        Date.parse(job?.createdAt ?? ''),
        ...(job?.messages.map((m) => m.at) ?? []),
      );
      return (closeTimes[i] ?? NaN) - (activeFrom + options.jobDurationMs);
    });
    return {
      jobs,
      completed: results.filter((r) => r.status === 'completed').length,
      startSeconds,
      wallSeconds,
      workerPeakMiB,
      workerCpuSeconds,
      followUpP50Ms: percentile(followUpLatencies, 50),
      followUpP99Ms: percentile(followUpLatencies, 99),
      followUpsDelivered: followUpLatencies.length,
      detectionP50Ms: percentile(detectionLags, 50),
      detectionP99Ms: percentile(detectionLags, 99),
    };
  } finally {
    await stack.stop();
  }
}

/** Many active agent jobs on one worker process, polling on a compressed time scale, with follow-ups. */
export async function concurrentJobs(options: ConcurrentJobsOptions): Promise<ConcurrentJobsRow[]> {
  const rows: ConcurrentJobsRow[] = [];
  for (const jobs of options.sizes) rows.push(await oneSize(jobs, options));
  return rows;
}

export function concurrentJobsTable(rows: ConcurrentJobsRow[]): string {
  return markdownTable(
    [
      'active jobs',
      'completed',
      'start all (s)',
      'wall (s)',
      'worker peak RSS (MiB)',
      'worker CPU (s)',
      'follow-ups delivered',
      'follow-up latency p50 / p99 (ms)',
      'detection lag p50 / p99 (ms)',
    ],
    rows.map((row) => [
      row.jobs,
      row.completed,
      row.startSeconds.toFixed(1),
      row.wallSeconds.toFixed(1),
      row.workerPeakMiB.toFixed(0),
      row.workerCpuSeconds.toFixed(1),
      row.followUpsDelivered,
      `${row.followUpP50Ms.toFixed(0)} / ${row.followUpP99Ms.toFixed(0)}`,
      `${row.detectionP50Ms.toFixed(0)} / ${row.detectionP99Ms.toFixed(0)}`,
    ]),
  );
}
