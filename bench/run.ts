import { concurrentJobs, concurrentJobsTable, FULL_JOBS, QUICK_JOBS } from './concurrent-jobs';
import { exportTable, exportThroughput, FULL_EXPORT, QUICK_EXPORT } from './export-throughput';
import { machine, recordSection } from './lib/report';
import {
  computedComparison,
  FULL_POLLING,
  modelCheck,
  pollingTables,
  QUICK_POLLING,
} from './polling-efficiency';
import { workerStart, workerStartTable } from './worker-start';

export interface BenchmarkRun {
  title: string;
  /** The markdown body: what was run, then the table. */
  run(quick: boolean): Promise<string>;
}

export const BENCHMARKS: Record<string, BenchmarkRun> = {
  export: {
    title: 'Export throughput',
    async run(quick) {
      const options = quick ? QUICK_EXPORT : FULL_EXPORT;
      const rows = await exportThroughput(options);
      return (
        `${options.rows.toLocaleString('en')} paths in pages of 250, ${options.latencyMs} ms simulated latency per ` +
        `page, ${options.repeats} repeats (median (min-max)); the workflow, a plain undici script at the same ` +
        `concurrency and a sequential one interleaved in each repeat.\n\n${exportTable(rows)}`
      );
    },
  },
  jobs: {
    title: 'Concurrent agent jobs',
    async run(quick) {
      const options = quick ? QUICK_JOBS : FULL_JOBS;
      const rows = await concurrentJobs(options);
      return (
        `Jobs active ${options.jobDurationMs / 1000} s at the simulator (a compressed time scale), polled at 1 s, ` +
        `2 s, 4 s, then every 5 s; ${options.followUps} follow-ups signalled while they run. One worker process ` +
        `(default tuning); follow-up latency: signal accepted to the message at the simulator; detection lag: job ` +
        `done at the simulator to workflow closed.\n\n${concurrentJobsTable(rows)}`
      );
    },
  },
  polling: {
    title: 'Polling efficiency',
    async run(quick) {
      const options = quick ? QUICK_POLLING : FULL_POLLING;
      const computed = computedComparison(options.jobMinutes);
      const checks = await modelCheck(options.checkSeconds);
      return (
        'Default polling (5 s, x2, at most 2 min, with jitter) against a fixed 2 min poller, which has the same ' +
        "worst-case lag. Computed by the workflow's own schedule functions for jobs of 1 min to 6 h; checked " +
        `against real runs below.\n\n${pollingTables(computed, checks)}`
      );
    },
  },
  start: {
    title: 'Worker start',
    async run(quick) {
      const result = await workerStart(quick ? 1 : 5);
      return (
        `Process spawn to "Worker started" (node with tsx, connected to a dev server), ${result.prebuiltSeconds.length} ` +
        `repeats, alternating.\n\n${workerStartTable(result)}`
      );
    },
  },
};

/** `npm run bench [-- --quick] [-- --only export,jobs]`: prints each table; full runs record them in docs. */
async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : Object.keys(BENCHMARKS);
  for (const name of only) {
    const benchmark = BENCHMARKS[name];
    if (!benchmark)
      throw new Error(`--only: unknown benchmark "${name}" (${Object.keys(BENCHMARKS).join(', ')})`);
    const command = `npm run bench -- ${quick ? '--quick ' : ''}--only ${name}`;
    const body = `\`${command}\` on ${machine()}.\n\n${await benchmark.run(quick)}`;
    console.log(`\n## ${benchmark.title}\n\n${body}\n`);
    if (!quick) recordSection(benchmark.title, body);
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
