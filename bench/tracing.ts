import { startOtlpReceiver } from '../dev/otlp-receiver';
import {
  concurrentJobs,
  concurrentJobsTable,
  type ConcurrentJobsOptions,
  type ConcurrentJobsRow,
} from './concurrent-jobs';
import type { BenchResults } from './run';

export const TRACED_FOLLOW_UPS_TITLE = 'Follow-up latency under load, tracing off and on';
/** The target: tracing on within 5% of off. */
export const TRACING_OVERHEAD_TARGET = 0.05;

/**
 * The follow-up benchmark's scenarios twice, alternating off and on in one run (the machine is shared: both see
 * the same load). On: the worker process exports every span (OTLP/HTTP JSON, the SDK's batching) to a receiver
 * in this process, which parses and counts them, as a collector would take them.
 */
export async function tracedFollowUps(base: ConcurrentJobsOptions, results: BenchResults): Promise<string> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  try {
    const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    const scenarios = base.scenarios.flatMap((scenario) => [
      scenario,
      { ...scenario, workerEnv: { ...scenario.workerEnv, ...traced } },
    ]);
    const rows = await concurrentJobs({ ...base, scenarios });
    results.followups = rows;
    const [off, on] = rows;
    return [
      `The follow-up benchmark (below) with the worker's tracing off, then on (\`OTEL_EXPORTER_OTLP_ENDPOINT\` ` +
        `to an OTLP/HTTP JSON receiver in the benchmark's process; ${receiver.spanCount().toLocaleString('en')} ` +
        `spans received), one after the other in one run. The benchmark starts its jobs with an untraced client, ` +
        `so the spans are the activities' and the HTTP requests'; a traced start would add the workflow's.`,
      concurrentJobsTable(rows.map(labelled)),
      off && on ? overheadVerdict(off, on) : '',
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

function overheadVerdict(off: ConcurrentJobsRow, on: ConcurrentJobsRow): string {
  const ratio = on.followUpP50Ms / off.followUpP50Ms;
  const cpu = on.workerCpuSeconds / off.workerCpuSeconds;
  const within = Math.abs(ratio - 1) <= TRACING_OVERHEAD_TARGET;
  return (
    `Follow-up latency p50, tracing on / off: ${ratio.toFixed(2)}x (target: within ` +
    `${(TRACING_OVERHEAD_TARGET * 100).toFixed(0)}%: ${within ? 'met' : 'not met'}); worker CPU on / off: ` +
    `${cpu.toFixed(2)}x.`
  );
}
