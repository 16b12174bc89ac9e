import { startAgentJob } from '../src/client/agent-job';
import {
  DEFAULT_POLLING,
  type AgentJobResult,
  type CompletePollingOptions,
  type PollingOptions,
} from '../src/contract/agent-job';
import { parseDuration, type DurationInput } from '../src/contract/duration';
import { agentJobWorkflowId } from '../src/contract/names';
import { resolvePolling } from '../src/workflows/agent-job/state';
import { historyChain } from './lib/history';
import { pollSchedule } from './lib/poll-schedule';
import { markdownTable } from './lib/report';
import { startProcessStack } from '../dev/stack';
import { median } from './lib/stats';

/**
 * The workflow's backoff polling (the defaults: 5 s, x2, at most 2 min) against a fixed-interval poller with the
 * same worst-case detection lag (every 2 min: the backoff's maximum interval), both run for real as agentJob
 * workflows on the dev server against simulator jobs finishing 1 min to 6 h after their create. Time is
 * compressed by a scale (see SHORT_SCALE): every duration (job lengths, intervals, deadline) is divided by it, measured lags and
 * job-hours are multiplied back. The same schedule is also computed at full scale by the workflow's own pure
 * functions (activities/agent-job.ts pollDelayMs, jitter included), so each measured figure has its model beside it.
 */
export interface PollingJob {
  /** Job length at full scale, in minutes. */
  minutes: number;
  /** Every duration of this job's run is divided by it. */
  scale: number;
}

export interface PollingBenchOptions {
  jobs: PollingJob[];
}

/**
 * The dev server fires timers shorter than about 1 s only after about 1 s (measured: a 91 ms timer fired after
 * 996 ms, a 1,857 ms one after 1,860 ms), so a compressed schedule is only faithful where its intervals are at
 * least 1 s. Two scales, both run at once:
 * - jobs up to 30 min at 1/5: the 5 s initial interval becomes 1 s, the ramp (5, 10, 20, 40, 80 s) stays exact;
 *   a 30 min job takes 6 min;
 * - longer jobs at 1/50: the 2 min interval becomes 2.4 s (exact), a 6 h job 7.2 min; only their first four
 *   ramp intervals (100 to 800 ms) are stretched to about 1 s, i.e. about 50 s of job time each, which moves
 *   when the steady 2 min polls fall but not their number or lag distribution.
 * The run takes about 7.5 minutes.
 */
export const SHORT_SCALE = 5;
export const LONG_SCALE = 50;
export const SHORT_UP_TO_MINUTES = 30;

const scaleFor = (minutes: number): PollingJob => ({
  minutes,
  scale: minutes <= SHORT_UP_TO_MINUTES ? SHORT_SCALE : LONG_SCALE,
});

/** 16 lengths spread evenly on a log scale from 1 min to 6 h (rounded to seconds). */
const logSpread = (count: number, fromMin: number, toMin: number): number[] =>
  Array.from(
    { length: count },
    (_, i) => Math.round(60 * fromMin * (toMin / fromMin) ** (i / (count - 1))) / 60,
  );

export const FULL_POLLING: PollingBenchOptions = { jobs: logSpread(16, 1, 360).map(scaleFor) };
/** A smoke test: two jobs of at most 12 s (the 1 min job at 1/10, its 500 ms first interval stretched to 1 s). */
export const QUICK_POLLING: PollingBenchOptions = {
  jobs: [
    { minutes: 1, scale: 10 },
    { minutes: 10, scale: LONG_SCALE },
  ],
};

const scaled = (duration: DurationInput, scale: number): number => {
  const ms = parseDuration(duration);
  if (ms === undefined) throw new Error(`not a duration: ${String(duration)}`);
  return Math.round(ms / scale);
};

/** The two pollers at full scale. */
export const BACKOFF: CompletePollingOptions = { ...DEFAULT_POLLING };
export const FIXED: CompletePollingOptions = {
  ...DEFAULT_POLLING,
  initialInterval: DEFAULT_POLLING.maxInterval,
  backoffCoefficient: 1,
};

function scaledPolling(polling: CompletePollingOptions, scale: number): PollingOptions {
  return {
    initialInterval: scaled(polling.initialInterval, scale),
    maxInterval: scaled(polling.maxInterval, scale),
    backoffCoefficient: polling.backoffCoefficient,
    deadline: scaled(polling.deadline, scale),
  };
}

export interface PollerFigures {
  /** Computed at full scale. */
  modelPolls: number;
  modelLagS: number;
  /** Measured on the dev server, lags scaled back to full scale. */
  polls: number;
  /** Job done at the simulator to the get-job request that saw it done. */
  lagS: number;
  /** Job done to workflow closed. */
  closeLagS: number;
  historyEvents: number;
}

export interface PollingRow {
  jobMinutes: number;
  scale: number;
  backoff: PollerFigures;
  fixed: PollerFigures;
}

type Poller = 'backoff' | 'fixed';

async function runJob(
  stack: Awaited<ReturnType<typeof startProcessStack>>,
  { minutes: jobMinutes, scale }: PollingJob,
  poller: Poller,
  index: number,
): Promise<PollerFigures> {
  const full = poller === 'backoff' ? BACKOFF : FIXED;
  const projectId = `bench-polling-${index}-${poller}`;
  const key = `${jobMinutes.toFixed(2)}m`;
  const doneAtMs = Math.round((jobMinutes * 60_000) / scale);
  stack.sim.configureProject(projectId, { jobs: { durationMs: doneAtMs } });
  const handle = await startAgentJob(
    stack.client,
    { projectId, prompt: `A ${key} job`, polling: scaledPolling(full, scale) },
    { key },
  );
  const result: AgentJobResult = await handle.result();
  const description = await handle.describe();
  const job = stack.sim.job(result.jobId);
  const doneAt = Date.parse(job?.createdAt ?? '') + doneAtMs;
  const polls = stack.sim.requests().filter((r) => r.route === 'getJob' && r.jobId === result.jobId);
  const model = pollSchedule(resolvePolling(full), agentJobWorkflowId(projectId, key), jobMinutes * 60_000);
  const chain = await historyChain(stack.client, handle.workflowId);
  return {
    modelPolls: model.length,
    modelLagS: ((model.at(-1) ?? Number.NaN) - jobMinutes * 60_000) / 1000,
    polls: polls.length,
    lagS: (((polls.at(-1)?.at ?? Number.NaN) - doneAt) * scale) / 1000,
    closeLagS: (((description.closeTime?.getTime() ?? Number.NaN) - doneAt) * scale) / 1000,
    historyEvents: chain.events.length,
  };
}

/** Runs every job length with both pollers at once, on one worker process. */
export async function pollingEfficiency(options: PollingBenchOptions): Promise<PollingRow[]> {
  const stack = await startProcessStack({ name: 'bench' });
  try {
    return await Promise.all(
      options.jobs.map(async (job, index) => {
        const [backoff, fixed] = await Promise.all([
          runJob(stack, job, 'backoff', index),
          runJob(stack, job, 'fixed', index),
        ]);
        return { jobMinutes: job.minutes, scale: job.scale, backoff, fixed };
      }),
    );
  } finally {
    await stack.stop();
  }
}

const length = (minutes: number): string =>
  minutes >= 60
    ? `${(minutes / 60).toFixed(minutes % 60 === 0 ? 0 : 2)} h`
    : `${minutes.toFixed(minutes % 1 === 0 ? 0 : 2)} min`;

/** Events per hour of job, at full scale. */
const perJobHour = (events: number, minutes: number): number => events / (minutes / 60);

export function pollingTable(rows: PollingRow[]): string {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const mean = (values: number[]) => sum(values) / Math.max(1, values.length);
  const pair = (measured: number, model: number, digits = 0) =>
    `${measured.toFixed(digits)} (${model.toFixed(digits)})`;
  const jobHours = sum(rows.map((r) => r.jobMinutes / 60));
  const of = (poller: Poller) => rows.map((r) => r[poller]);
  return markdownTable(
    [
      'job length',
      'run at',
      'backoff: polls (model)',
      'backoff: lag s (model)',
      'backoff: lag to closed s',
      'backoff: events per job-hour',
      'fixed 2 min: polls (model)',
      'fixed: lag s (model)',
      'fixed: lag to closed s',
      'fixed: events per job-hour',
    ],
    [
      ...rows.map((row) => [
        length(row.jobMinutes),
        `1/${row.scale}`,
        pair(row.backoff.polls, row.backoff.modelPolls),
        pair(row.backoff.lagS, row.backoff.modelLagS),
        row.backoff.closeLagS.toFixed(0),
        perJobHour(row.backoff.historyEvents, row.jobMinutes).toFixed(0),
        pair(row.fixed.polls, row.fixed.modelPolls),
        pair(row.fixed.lagS, row.fixed.modelLagS),
        row.fixed.closeLagS.toFixed(0),
        perJobHour(row.fixed.historyEvents, row.jobMinutes).toFixed(0),
      ]),
      ...(['mean', 'median', 'max'] as const).map((stat) => {
        const f = stat === 'mean' ? mean : stat === 'median' ? median : (v: number[]) => Math.max(...v);
        const pick = (poller: Poller, field: keyof PollerFigures) => f(of(poller).map((x) => x[field]));
        const columnsOf = (poller: Poller) => [
          pair(pick(poller, 'polls'), pick(poller, 'modelPolls'), 1),
          pair(pick(poller, 'lagS'), pick(poller, 'modelLagS')),
          pick(poller, 'closeLagS').toFixed(0),
          stat === 'mean'
            ? `${(sum(of(poller).map((x) => x.historyEvents)) / jobHours).toFixed(0)} overall`
            : '',
        ];
        return [`**${stat}**`, '', ...columnsOf('backoff'), ...columnsOf('fixed')];
      }),
    ],
  );
}
