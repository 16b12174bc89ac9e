import { startOtlpReceiver } from '../dev/otlp-receiver';
import {
  concurrentJobs,
  concurrentJobsTable,
  type ConcurrentJobsOptions,
  type ConcurrentJobsRow,
} from './concurrent-jobs';
import type { BenchResults } from './run';
import { median } from './lib/stats';

export const TRACED_FOLLOW_UPS_TITLE = 'Follow-up latency under load, tracing off and on';
/** The target: tracing on within 5% of off. */
export const TRACING_OVERHEAD_TARGET = 0.05;

/** Off, on, off, on, …: a noisy minute of the shared machine then lands on both sides alike. */
const ROUNDS = 2;

/**
 * The follow-up benchmark's scenarios, alternating off and on in one run, ROUNDS times each, compared by medians. On: the worker process exports every span (OTLP/HTTP JSON, the SDK's batching) to a receiver
 * in this process, which parses and counts them, as a collector would take them.
 */
export async function tracedFollowUps(base: ConcurrentJobsOptions, results: BenchResults): Promise<string> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  try {
    const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    const rounds = Array.from({ length: ROUNDS }, () => base.scenarios).flat();
    const scenarios = rounds.flatMap((scenario) => [
      scenario,
      { ...scenario, workerEnv: { ...scenario.workerEnv, ...traced } },
    ]);
    const rows = await concurrentJobs({ ...base, scenarios });
    results.followups = rows;
    const isOn = (row: ConcurrentJobsRow) => row.workerEnv.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
    const off = rows.filter((row) => !isOn(row));
    const on = rows.filter(isOn);
    return [
      `The follow-up benchmark (below) with the worker's tracing off and on, alternating, ${ROUNDS} runs of each ` +
        `(\`OTEL_EXPORTER_OTLP_ENDPOINT\` ` +
        `to an OTLP/HTTP JSON receiver in the benchmark's process; ${receiver.spanCount().toLocaleString('en')} ` +
        `spans received), in one run. The benchmark starts its jobs with an untraced client, ` +
        `so the spans are the activities' and the HTTP requests'; a traced start would add the workflow's.`,
      concurrentJobsTable(rows.map(labelled)),
      off.length > 0 && on.length > 0 ? overheadVerdict(off, on) : '',
    ].join('\n\n');
  } finally {
    await receiver.close();
  }
}

/** The tuning column says tracing on or off, not the receiver's port of this run. */
function labelled(row: ConcurrentJobsRow): ConcurrentJobsRow {
  const on = row.workerEnv.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  return { ...row, workerEnv: { tracing: on ? 'on (OTLP http/json)' : 'off' } };
}

function overheadVerdict(off: ConcurrentJobsRow[], on: ConcurrentJobsRow[]): string {
  const p50 = (rows: ConcurrentJobsRow[]) => median(rows.map((row) => row.followUpP50Ms));
  const cpuOf = (rows: ConcurrentJobsRow[]) => median(rows.map((row) => row.workerCpuSeconds));
  const ratio = p50(on) / p50(off);
  const cpu = cpuOf(on) / cpuOf(off);
  const within = Math.abs(ratio - 1) <= TRACING_OVERHEAD_TARGET;
  return (
    `Medians of the runs: follow-up latency p50, tracing on / off: ${ratio.toFixed(2)}x (target: within ` +
    `${(TRACING_OVERHEAD_TARGET * 100).toFixed(0)}%: ${within ? 'met' : 'not met'}); worker CPU on / off: ` +
    `${cpu.toFixed(2)}x.`
  );
}
