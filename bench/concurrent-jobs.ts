import { sendFollowUp, startAgentJob } from '../src/client/agent-jobs';
import type { AgentJobResult, PollingOptions } from '../src/contract/agent-job';
import { agentJobWorkflowId } from '../src/contract/names';
import { cpuSecondsOf, descendantPids, memoryOf, sampleRss } from './lib/process-stats';
import { markdownTable } from './lib/report';
import { mapPool } from './lib/pool';
import { startBenchStack, workerPid } from './lib/stack';
import { percentile } from './lib/stats';

export interface ConcurrentJobsOptions {
  sizes: number[];
  /** How long each job stays active at the simulator (the compressed "hours"). */
  jobDurationMs: number;
  /** Follow-ups signalled while the jobs run, to jobs spread over the whole set. */
  followUps: number;
  /** client.workflow.start calls in flight while starting the jobs. */
  startConcurrency: number;
  /** Worker tuning (WORKER_MAX_CACHED_WORKFLOWS...); empty: the defaults of src/config.ts. */
  workerEnv: Record<string, string>;
}

export const FULL_JOBS: ConcurrentJobsOptions = {
  sizes: [1000, 2000],
  jobDurationMs: 90_000,
  followUps: 200,
  startConcurrency: 50,
  workerEnv: {},
};
export const QUICK_JOBS: ConcurrentJobsOptions = {
  sizes: [50],
  jobDurationMs: 6_000,
  followUps: 10,
  startConcurrency: 50,
  workerEnv: {},
};

/** Polling compressed like the jobs: 1 s, 2 s, 4 s, then every 5 s (minus up to 10 % jitter). */
export const COMPRESSED_POLLING = {
  initialInterval: '1s',
  maxInterval: '5s',
  backoffCoefficient: 2,
  deadline: '1h',
} as const satisfies PollingOptions;

/** Targets of the issue. */
export const RSS_TARGET_MB = 400;
export const RSS_TARGET_JOBS = 2000;
export const FOLLOW_UP_P99_TARGET_MS = 1000;

export interface ConcurrentJobsRow {
  jobs: number;
  completed: number;
  startSeconds: number;
  wallSeconds: number;
  workerIdleMiB: number;
  workerPeakMiB: number;
  workerCpuSeconds: number;
  devServerCpuSeconds: number;
  polls: number;
  followUpsSignalled: number;
  followUpsDelivered: number;
  followUpP50Ms: number;
  followUpP99Ms: number;
  detectionP50Ms: number;
  detectionP99Ms: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function oneSize(jobs: number, options: ConcurrentJobsOptions): Promise<ConcurrentJobsRow> {
  const stack = await startBenchStack({ jobs: { durationMs: options.jobDurationMs } }, options.workerEnv);
  try {
    const { client, sim } = stack;
    const pid = workerPid(stack);
    const devServer = descendantPids('start-dev');
    const devCpu = () => devServer.reduce((sum, p) => sum + cpuSecondsOf(p), 0);
    const workerIdleMiB = memoryOf(pid).rssMiB;
    const cpuBefore = cpuSecondsOf(pid);
    const devCpuBefore = devCpu();
    const rss = sampleRss(pid);
    const started = performance.now();
    // The service allows 100 creates per project and hour: 90 jobs per project.
    const projects = Math.ceil(jobs / 90);
    const ids = Array.from({ length: jobs }, (_, i) => ({
      projectId: `bench-jobs-${i % projects}`,
      key: `j${i}`,
    }));
    await mapPool(ids, options.startConcurrency, ({ projectId, key }) =>
      startAgentJob(
        client,
        { projectId, prompt: `Benchmark job ${key}`, polling: COMPRESSED_POLLING },
        { key },
      ),
    );
    const startSeconds = (performance.now() - started) / 1000;

    // Every job created at the service: the follow-ups then measure a loaded worker in its steady state, not the
    // create of the job they wait for. They go to jobs spread over the set, one after another, while every job
    // is still active (before the first one created could finish).
    await until(() => sim.stats().jobsCreated >= jobs, options.jobDurationMs);
    const firstCreate = sim.requests().find((r) => r.route === 'createJob')?.at ?? Date.now();
    const windowMs = Math.max(1000, firstCreate + options.jobDurationMs * 0.8 - Date.now());
    const every = Math.max(1, Math.floor(jobs / Math.max(1, options.followUps)));
    const targets = ids.filter((_, i) => i % every === 0).slice(0, options.followUps);
    const spacingMs = windowMs / Math.max(1, targets.length);
    const accepted = new Map<string, number>();
    for (const [i, { projectId, key }] of targets.entries()) {
      const prompt = `Benchmark follow-up ${key}`;
      const sent = performance.now();
      await sendFollowUp(client, agentJobWorkflowId(projectId, key), { prompt, messageId: `f${i}` });
      accepted.set(prompt, Date.now());
      await sleep(Math.max(0, spacingMs - (performance.now() - sent)));
    }

    const results = await mapPool(ids, 200, ({ projectId, key }) =>
      client.workflow.getHandle<() => Promise<AgentJobResult>>(agentJobWorkflowId(projectId, key)).result(),
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const workerCpuSeconds = cpuSecondsOf(pid) - cpuBefore;
    const devServerCpuSeconds = devCpu() - devCpuBefore;
    const workerPeakMiB = Math.max(rss.stop(), memoryOf(pid).peakMiB);
    const closeTimes = await mapPool(ids, 100, async ({ projectId, key }) => {
      const description = await client.workflow.getHandle(agentJobWorkflowId(projectId, key)).describe();
      return description.closeTime?.getTime() ?? Number.NaN;
    });

    const log = sim.requests();
    const followUpLatencies = log
      .filter((r) => r.route === 'sendMessage' && r.processed && accepted.has(r.prompt ?? ''))
      .map((r) => r.at - (accepted.get(r.prompt ?? '') ?? Number.NaN));
    // A job is done at the simulator durationMs after its create or its last message (which re-activates it).
    const detectionLags = results.map((result, i) => {
      const job = sim.job(result.jobId);
      const activeFrom = Math.max(
        Date.parse(job?.createdAt ?? ''),
        ...(job?.messages.map((m) => m.at) ?? []),
      );
      return (closeTimes[i] ?? Number.NaN) - (activeFrom + options.jobDurationMs);
    });
    return {
      jobs,
      completed: results.filter((r) => r.status === 'completed').length,
      startSeconds,
      wallSeconds,
      workerIdleMiB,
      workerPeakMiB,
      workerCpuSeconds,
      devServerCpuSeconds,
      polls: log.filter((r) => r.route === 'getJob').length,
      followUpsSignalled: accepted.size,
      followUpsDelivered: followUpLatencies.length,
      followUpP50Ms: percentile(followUpLatencies, 50),
      followUpP99Ms: percentile(followUpLatencies, 99),
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
      'worker RSS idle / peak (MiB)',
      'worker CPU (s)',
      'dev server CPU (s)',
      'polls',
      'follow-ups delivered',
      'follow-up latency p50 / p99 (ms)',
      'detection lag p50 / p99 (ms)',
    ],
    rows.map((row) => [
      row.jobs,
      row.completed,
      row.startSeconds.toFixed(1),
      row.wallSeconds.toFixed(1),
      `${row.workerIdleMiB.toFixed(0)} / ${row.workerPeakMiB.toFixed(0)}`,
      row.workerCpuSeconds.toFixed(1),
      row.devServerCpuSeconds.toFixed(1),
      row.polls.toLocaleString('en'),
      `${row.followUpsDelivered} of ${row.followUpsSignalled}`,
      `${row.followUpP50Ms.toFixed(0)} / ${row.followUpP99Ms.toFixed(0)}`,
      `${row.detectionP50Ms.toFixed(0)} / ${row.detectionP99Ms.toFixed(0)}`,
    ]),
  );
}

export function concurrentJobsVerdict(rows: ConcurrentJobsRow[]): string {
  const largest = rows.find((r) => r.jobs === RSS_TARGET_JOBS);
  const peakMB = largest ? (largest.workerPeakMiB * 2 ** 20) / 1e6 : Number.NaN;
  const rssLine = largest
    ? `**${peakMB < RSS_TARGET_MB ? 'met' : 'missed'}** (peak ${peakMB.toFixed(0)} MB = ` +
      `${largest.workerPeakMiB.toFixed(0)} MiB)`
    : 'not run at that size';
  const p99 = Math.max(...rows.map((r) => r.followUpP99Ms));
  return (
    `Targets: ${RSS_TARGET_JOBS.toLocaleString('en')} jobs under ${RSS_TARGET_MB} MB worker RSS: ${rssLine}; ` +
    `follow-up p99 under ${FOLLOW_UP_P99_TARGET_MS} ms: **${p99 < FOLLOW_UP_P99_TARGET_MS ? 'met' : 'missed'}** ` +
    `(worst p99 ${p99.toFixed(0)} ms).`
  );
}
