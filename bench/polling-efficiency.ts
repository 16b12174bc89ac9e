import { startAgentJob } from '../src/client/agent-jobs';
import { DEFAULT_POLLING, type AgentJobResult, type PollingOptions } from '../src/contract/agent-job';
import {
  pollDelayMs,
  pollJitterKey,
  resolvePolling,
  type PollingSettings,
} from '../src/workflows/agent-job/backoff';
import { markdownTable } from './lib/report';
import { startBenchStack } from './lib/stack';
import { median } from './lib/stats';

/**
 * Polls and detection lag of the workflow's backoff against a fixed-interval poller with the same worst-case lag
 * (the backoff's maximum interval). Six-hour jobs cannot run here, so the schedule is computed by the workflow's
 * own pure functions (backoff.ts, jitter included), and a dev-server run of short jobs checks that the real
 * workflow polls exactly as computed.
 */
export interface PollingOptionsForBench {
  /** Job durations for the computed comparison, in minutes. */
  jobMinutes: number[];
  /** Durations of the real jobs that check the model, in seconds. */
  checkSeconds: number[];
}

export const FULL_POLLING: PollingOptionsForBench = {
  jobMinutes: [1, 2, 5, 10, 20, 30, 60, 120, 180, 360],
  checkSeconds: [2, 4, 7, 11, 16, 22],
};
export const QUICK_POLLING: PollingOptionsForBench = { jobMinutes: [1, 60, 360], checkSeconds: [3, 6] };

const CHECK_POLLING = {
  initialInterval: '1s',
  maxInterval: '4s',
  backoffCoefficient: 2,
} as const satisfies PollingOptions;

/** Poll times (ms after the create) until the first one at or after `doneAtMs`. */
export function pollSchedule(settings: PollingSettings, workflowId: string, doneAtMs: number): number[] {
  const times: number[] = [];
  let at = 0;
  for (let step = 0; at < doneAtMs; step += 1) {
    at += pollDelayMs(settings, step, pollJitterKey(workflowId, times.length + 1));
    times.push(at);
  }
  return times;
}

export interface ComputedRow {
  jobMinutes: number;
  backoffPolls: number;
  backoffLagS: number;
  fixedPolls: number;
  fixedLagS: number;
}

export interface CheckRow {
  jobSeconds: number;
  computedPolls: number;
  measuredPolls: number;
  computedLagS: number;
  measuredLagS: number;
  historyEvents: number;
}

export function computedComparison(jobMinutes: number[]): ComputedRow[] {
  const settings = resolvePolling(DEFAULT_POLLING);
  const fixedMs = settings.maxIntervalMs;
  return jobMinutes.map((minutes) => {
    const doneAt = minutes * 60_000;
    const polls = pollSchedule(settings, `agent-job/bench/${minutes}m`, doneAt);
    const detectedAt = polls[polls.length - 1] ?? 0;
    const fixedPolls = Math.ceil(doneAt / fixedMs);
    return {
      jobMinutes: minutes,
      backoffPolls: polls.length,
      backoffLagS: (detectedAt - doneAt) / 1000,
      fixedPolls,
      fixedLagS: (fixedPolls * fixedMs - doneAt) / 1000,
    };
  });
}

export async function modelCheck(checkSeconds: number[]): Promise<CheckRow[]> {
  const stack = await startBenchStack();
  try {
    return await Promise.all(
      checkSeconds.map(async (seconds) => {
        const projectId = `bench-polling-${seconds}s`;
        stack.sim.configureProject(projectId, { jobs: { durationMs: seconds * 1000 } });
        const handle = await startAgentJob(
          stack.client,
          { projectId, prompt: `A ${seconds} s job`, polling: CHECK_POLLING },
          { key: 'check' },
        );
        const result: AgentJobResult = await handle.result();
        const job = stack.sim.job(result.jobId);
        const createdAt = Date.parse(job?.createdAt ?? '');
        const polls = stack.sim.requests().filter((r) => r.route === 'getJob' && r.projectId === projectId);
        const computed = pollSchedule(resolvePolling(CHECK_POLLING), handle.workflowId, seconds * 1000);
        const history = await handle.fetchHistory();
        return {
          jobSeconds: seconds,
          computedPolls: computed.length,
          measuredPolls: polls.length,
          computedLagS: ((computed[computed.length - 1] ?? 0) - seconds * 1000) / 1000,
          measuredLagS: ((polls[polls.length - 1]?.at ?? NaN) - createdAt - seconds * 1000) / 1000,
          historyEvents: history.events?.length ?? 0,
        };
      }),
    );
  } finally {
    await stack.stop();
  }
}

export function pollingTables(computed: ComputedRow[], checks: CheckRow[]): string {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const eventsPerPoll = median(checks.map((c) => c.historyEvents / Math.max(1, c.measuredPolls)));
  const pollsPerHour = 3_600_000 / resolvePolling(DEFAULT_POLLING).maxIntervalMs;
  return [
    markdownTable(
      ['job length', 'backoff polls', 'backoff lag (s)', 'fixed 2 min polls', 'fixed lag (s)'],
      [
        ...computed.map((row) => [
          row.jobMinutes >= 60 ? `${row.jobMinutes / 60} h` : `${row.jobMinutes} min`,
          row.backoffPolls,
          row.backoffLagS.toFixed(0),
          row.fixedPolls,
          row.fixedLagS.toFixed(0),
        ]),
        [
          '**all**',
          sum(computed.map((r) => r.backoffPolls)),
          `mean ${(sum(computed.map((r) => r.backoffLagS)) / computed.length).toFixed(0)}`,
          sum(computed.map((r) => r.fixedPolls)),
          `mean ${(sum(computed.map((r) => r.fixedLagS)) / computed.length).toFixed(0)}`,
        ],
      ],
    ),
    '',
    'The model against the real workflow on the dev server (polling 1 s, x2, at most 4 s):',
    '',
    markdownTable(
      [
        'job length (s)',
        'polls computed',
        'polls measured',
        'lag computed (s)',
        'lag measured (s)',
        'history events',
      ],
      checks.map((c) => [
        c.jobSeconds,
        c.computedPolls,
        c.measuredPolls,
        c.computedLagS.toFixed(1),
        c.measuredLagS.toFixed(1),
        c.historyEvents,
      ]),
    ),
    '',
    `History: ${eventsPerPoll.toFixed(1)} events per poll (median of the real runs), so a job polled every ` +
      `2 min adds about ${(eventsPerPoll * pollsPerHour).toFixed(0)} events per job-hour; the workflow continues ` +
      `as new at 5,000 events, about every ${(5000 / (eventsPerPoll * pollsPerHour)).toFixed(0)} hours of polling.`,
  ].join('\n');
}
