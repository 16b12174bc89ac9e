import { budgets, budgetsTables, FULL_BUDGETS, QUICK_BUDGETS, type BudgetsResult } from './budgets';
import {
  concurrentJobs,
  concurrentJobsTable,
  concurrentJobsVerdict,
  COMPRESSED_POLLING,
  FOLLOW_UP_LOAD,
  followUpLoadVerdict,
  FULL_JOBS,
  QUICK_FOLLOW_UP_LOAD,
  QUICK_SCALE_JOBS,
  SCALE_JOBS,
  scaleVerdict,
  QUICK_JOBS,
  type ConcurrentJobsRow,
} from './concurrent-jobs';
import {
  exportProfileTable,
  exportTable,
  exportThroughput,
  exportVerdict,
  FULL_EXPORT,
  PAGE_SIZE,
  QUICK_EXPORT,
  type ExportRow,
} from './export-throughput';
import {
  FULL_HISTORY,
  DAY_READS,
  DEFAULT_POLLING_TEXT,
  historyEvents,
  historyEventsTable,
  historyVerdict,
  QUICK_HISTORY,
  type HistoryEventsRow,
} from './history-events';
import { codeSize, codeSizeTable } from './code-size';
import { machine, recordSection } from './lib/report';
import {
  FULL_OBSERVABILITY,
  observabilityOverhead,
  observabilityTable,
  QUICK_OBSERVABILITY,
  type ObservabilityResult,
} from './observability';
import { TRACED_FOLLOW_UPS_TITLE, tracedFollowUps } from './tracing';
import { versioning, versioningTables, type VersioningResult } from './versioning';
import {
  FULL_TRACED_EXPORT,
  QUICK_TRACED_EXPORT,
  tracedExport,
  tracedExportTable,
  type TracedExportResult,
} from './tracing-export';
import {
  FULL_OBJECT_STORAGE,
  objectStorage,
  objectStorageTables,
  QUICK_OBJECT_STORAGE,
  type ObjectStorageResult,
} from './object-storage';
import {
  FULL_POLLING,
  pollingEfficiency,
  pollingTable,
  QUICK_POLLING,
  LONG_SCALE,
  SHORT_SCALE,
  SHORT_UP_TO_MINUTES,
  type PollingRow,
} from './polling-efficiency';
import {
  FULL_MEMORY,
  QUICK_MEMORY,
  retainedHeapTable,
  workflowMemory,
  workflowMemoryTable,
  workflowMemoryVerdict,
  type WorkflowMemoryRow,
} from './workflow-memory';
import { workerStart, workerStartTable, type WorkerStartResult } from './worker-start';
import {
  exportAtServiceBudget,
  FULL_SERVICE_BUDGET,
  QUICK_SERVICE_BUDGET,
  serviceBudgetTable,
  serviceBudgetVerdict,
  type ServiceBudgetRow,
} from './export-service-budget';
import { defaultMaxCachedWorkflows } from '../src/config';

export const BENCH_NAMES = [
  'export',
  'jobs',
  'memory',
  'polling',
  'start',
  'budgets',
  'history',
  'followups',
  'scale',
  'storage',
  'tracing',
  'observability',
  'versioning',
  'size',
] as const;
export type BenchName = (typeof BENCH_NAMES)[number];

export const TITLES: Record<BenchName, string> = {
  export: 'Export throughput',
  jobs: 'Concurrent agent jobs',
  memory: 'Memory per cached workflow',
  polling: 'Polling efficiency',
  start: 'Worker start',
  budgets: 'Budgets',
  history: 'History per polled job',
  followups: 'Follow-up latency under load',
  scale: 'Agent jobs at scale',
  storage: 'Exports to object storage',
  tracing: 'Export speed, tracing off and on',
  observability: 'Worker CPU, metrics and JSON logs off and on',
  versioning: 'Worker Versioning: versioned against unversioned',
  size: 'Code size',
};

/** What each benchmark returned, and the markdown section it printed. */
export interface BenchResults {
  export?: ExportRow[];
  exportAtServiceBudget?: ServiceBudgetRow;
  jobs?: ConcurrentJobsRow[];
  memory?: WorkflowMemoryRow[];
  polling?: PollingRow[];
  start?: WorkerStartResult;
  budgets?: BudgetsResult;
  history?: HistoryEventsRow[];
  followups?: ConcurrentJobsRow[];
  scale?: ConcurrentJobsRow[];
  storage?: ObjectStorageResult;
  tracing?: TracedExportResult;
  observability?: ObservabilityResult;
  versioning?: VersioningResult;
  markdown: Partial<Record<BenchName, string>>;
  seconds: Partial<Record<BenchName, number>>;
}

async function exportSection(quick: boolean, results: BenchResults): Promise<string> {
  const options = quick ? QUICK_EXPORT : FULL_EXPORT;
  const rows = await exportThroughput(options);
  results.export = rows;
  const atBudget = await exportAtServiceBudget(quick ? QUICK_SERVICE_BUDGET : FULL_SERVICE_BUDGET);
  results.exportAtServiceBudget = atBudget;
  return [
    `**An ample budget** (the worker's \`DOCS_API_ANALYTICS_RATE_LIMIT=1000000/1h\`, the simulator's off). ` +
      `${options.paths.toLocaleString('en')} paths in pages of ${PAGE_SIZE}, ${options.latencyMs} ms simulated ` +
      `latency on every page (simulator fault \`latency\`). Per repeat, interleaved: the \`visitorsExport\` ` +
      `workflow (CSV) on one worker process, a plain undici script at the same concurrency, a plain sequential ` +
      `undici script (both write the same CSV). Ideal bound: ceil(pages / concurrency) x latency. ` +
      `${options.repeats} repeat(s): median (min-max); ratios are per repeat, then the median.`,
    exportTable(rows),
    exportVerdict(rows),
    "Where the median workflow run's time went (from its history, all runs):",
    exportProfileTable(rows),
    `**The service's budget** (\`${atBudget.options.rateLimit}\` for the worker and the simulator, every repeat ` +
      `starting with the whole budget): ${atBudget.options.pages} pages of ${PAGE_SIZE} at concurrency ` +
      `${atBudget.options.concurrency}, ${atBudget.options.latencyMs} ms per page; the workflow, then a plain ` +
      `undici script at the same concurrency. ${atBudget.options.repeats} repeat(s).`,
    serviceBudgetTable(atBudget),
    serviceBudgetVerdict(atBudget),
  ].join('\n\n');
}

async function jobsSection(quick: boolean, results: BenchResults): Promise<string> {
  const options = quick ? QUICK_JOBS : FULL_JOBS;
  const rows = await concurrentJobs(options);
  results.jobs = rows;
  return [
    `Each row on a fresh dev server, simulator and worker process (\`src/worker.ts\`; RSS and CPU from ` +
      `/proc). Jobs stay active at the simulator for tens of seconds (a compressed time scale) and are polled ` +
      `from ${COMPRESSED_POLLING.initialInterval}, x${COMPRESSED_POLLING.backoffCoefficient}; all are started ` +
      `through \`startAgentJob\` (${options.startConcurrency} in flight); once the service has created them all, ` +
      `follow-ups are signalled one at a time to jobs spread over the set, while every job is still active. ` +
      `Follow-up latency: signal call resolved to the message at the simulator. Detection lag: job done at the ` +
      `simulator (create or last message + its duration) to workflow closed. "All active at once": the last ` +
      `create reached the service before the first job finished.`,
    concurrentJobsTable(rows),
    concurrentJobsVerdict(rows),
  ].join('\n\n');
}

async function memorySection(quick: boolean, results: BenchResults): Promise<string> {
  const options = quick ? QUICK_MEMORY : FULL_MEMORY;
  const rows = await workflowMemory(options);
  results.memory = rows;
  return [
    `What a cached workflow costs the worker. Each run on a fresh dev server, simulator and worker process ` +
      `(\`src/worker.ts\` with \`WORKER_WORKFLOW_BUNDLE\` set to a bundle built by this benchmark from ` +
      `\`bench/memory-workflows/\`, and \`bench/lib/heap-snapshot-preload.cjs\` preloaded into every thread): the ` +
      `worker's RSS (median of ${Math.max(2, options.rssSamples)} samples a second apart) before any workflow, ` +
      `then with ${options.workflows.toLocaleString('en')} workflows that have each completed a workflow task and ` +
      `wait (in the worker's sticky cache, default size), divided by their number. Then the same after a full ` +
      `GC in every thread (the preload runs V8's \`gc()\`), beside the V8 heaps of the worker's threads: ` +
      `committed (physical, all threads) and used (the workflow thread, which grows the most, and the others). ` +
      `The first row is the SDK floor: a workflow that only waits, in a bundle of ` +
      `only \`@temporalio/workflow\`. \`agentJob\` rows also count the project's budget limiter workflows ` +
      `(one per project, 20). ${options.repeats} repeat(s), the variants interleaved: median (min-max).`,
    workflowMemoryTable(rows),
    workflowMemoryVerdict(rows),
    `Where a cached workflow's heap goes, from a heap snapshot of the workflow thread taken with them cached ` +
      `(first repeat; bench/lib/cached-workflow-heap.ts): the median workflow's retained size (its ` +
      `\`ReusableVMWorkflow\`'s dominator subtree), each object counted in the nearest module the sandbox ` +
      `evaluated again for this workflow, or else under the SDK \`Activator\` field that holds it.`,
    retainedHeapTable(rows),
  ].join('\n\n');
}

async function pollingSection(quick: boolean, results: BenchResults): Promise<string> {
  const options = quick ? QUICK_POLLING : FULL_POLLING;
  const rows = await pollingEfficiency(options);
  results.polling = rows;
  const longest = Math.max(...options.jobs.map((job) => job.minutes));
  return [
    `${rows.length} simulator jobs finishing 1 min to ${longest} min after their create (log-spaced), each ` +
      `polled by two agentJob workflows at once: the default backoff (5 s, x2, at most 2 min, 10 % jitter) and ` +
      `a fixed 2 min poller (the same workflow with backoffCoefficient 1), which has the same worst-case ` +
      `detection lag. Time is compressed: every duration (job length, intervals, deadline) is divided by the ` +
      `scale, measured lags and job-hours are multiplied back. Jobs up to ${SHORT_UP_TO_MINUTES} min run at ` +
      `1/${SHORT_SCALE}, so that the 5 s initial interval becomes 1 s: the dev server fires shorter timers only ` +
      `after about 1 s. Longer jobs run at 1/${LONG_SCALE} (2 min becomes 2.4 s; 6 h, 7.2 min), where only their ` +
      `first four ramp intervals are stretched to about 1 s. Polls: the simulator's get-job requests for the ` +
      `job; lag: job done to the poll that saw it; in brackets, the same figure computed at full scale by the ` +
      `workflow's own schedule functions (activities/agent-job.ts pollDelayMs, jitter included). Events per job-hour: the workflow's ` +
      `whole history (create, polls, result) over the job's length.`,
    pollingTable(rows),
  ].join('\n\n');
}

async function startSection(quick: boolean, results: BenchResults): Promise<string> {
  const result = await workerStart(quick ? 3 : 5);
  results.start = result;
  return [
    `Process spawn to "Worker started" (\`node --import tsx src/worker.ts\`, as startWorkerProcess runs it, ` +
      `connected to a dev server): \`WORKER_WORKFLOW_BUNDLE=dist/workflow-bundle.js\` (\`npm run build\`) ` +
      `against \`WORKER_WORKFLOW_BUNDLE=off\` (bundles src/workflows at start), alternating, ` +
      `${result.prebuiltSeconds.length} repeat(s).`,
    workerStartTable(result),
  ].join('\n\n');
}

function sizeSection(): Promise<string> {
  return Promise.resolve(
    [
      'Lines of the TypeScript files under `src/` (newlines, as `wc -l` counts them) of each part an issue sets a ' +
        'size for, with its target; the parts are path prefixes, `CODE_SETS` in `bench/code-size.ts`.',
      codeSizeTable(codeSize()),
    ].join('\n\n'),
  );
}

async function budgetsSection(quick: boolean, results: BenchResults): Promise<string> {
  const options = quick ? QUICK_BUDGETS : FULL_BUDGETS;
  const result = await budgets(options);
  results.budgets = result;
  return budgetsTables(result, options);
}

async function historySection(quick: boolean, results: BenchResults): Promise<string> {
  const rows = await historyEvents(quick ? QUICK_HISTORY : FULL_HISTORY);
  results.history = rows;
  return [
    `One agentJob per row, polled every second (coefficient 1) until its simulator job completes, no ` +
      `follow-ups, on a fresh dev server, simulator and worker process (\`src/worker.ts\` with ` +
      `\`WORKER_WORKFLOW_BUNDLE\`): this tree's workflow (one poll activity whose retries are the waits). ` +
      `Polls: the simulator's get-job requests; events and workflow tasks: the closed ` +
      `run's history.` +
      (quick
        ? ''
        : ` The last row is a 24-hour job's reads at the default polling (${DAY_READS} at ` +
          `${DEFAULT_POLLING_TEXT}, jittered), made 100 ms apart: the job stays active at the simulator until ` +
          `it has been read that often.`),
    historyEventsTable(rows),
    historyVerdict(rows),
  ].join('\n\n');
}

async function followUpsSection(quick: boolean, results: BenchResults, tracing = false): Promise<string> {
  const base = quick ? QUICK_FOLLOW_UP_LOAD : FOLLOW_UP_LOAD;
  if (tracing) return tracedFollowUps(base, results);
  const options = base;
  const rows = await concurrentJobs(options);
  results.followups = rows;
  return [
    `The concurrent-jobs benchmark's method (fresh dev server, simulator and worker process with the default ` +
      `tuning; follow-ups signalled one at a time, spread over the jobs, while every job is active), at the ` +
      `scale of issue 17: jobs polled from ${COMPRESSED_POLLING.initialInterval} to ` +
      `${COMPRESSED_POLLING.maxInterval}. Latency: signal call resolved to the message at the simulator.`,
    concurrentJobsTable(rows),
    followUpLoadVerdict(rows),
  ].join('\n\n');
}

async function scaleSection(quick: boolean, results: BenchResults): Promise<string> {
  const rows = await concurrentJobs(quick ? QUICK_SCALE_JOBS : SCALE_JOBS);
  results.scale = rows;
  return [
    `The concurrent-jobs benchmark's method at issue 17's scale: the 2,000-job compressed row (before issue 17: ` +
      `3,486 MB peak RSS, follow-up p99 29.5 s, see "Concurrent agent jobs") and 5,000 jobs at production ` +
      `polling (5 s doubling to 2 min) on one worker started with no tuning: its sticky cache is the default, ` +
      `sized to the heap limit (${defaultMaxCachedWorkflows()} workflows here, src/config.ts).`,
    concurrentJobsTable(rows),
    scaleVerdict(rows),
  ].join('\n\n');
}

async function storageSection(quick: boolean, results: BenchResults): Promise<string> {
  const result = await objectStorage(quick ? QUICK_OBJECT_STORAGE : FULL_OBJECT_STORAGE);
  results.storage = result;
  return objectStorageTables(result);
}

async function tracingSection(quick: boolean, results: BenchResults): Promise<string> {
  const result = await tracedExport(quick ? QUICK_TRACED_EXPORT : FULL_TRACED_EXPORT);
  results.tracing = result;
  return tracedExportTable(result);
}

async function observabilitySection(quick: boolean, results: BenchResults): Promise<string> {
  const result = await observabilityOverhead(quick ? QUICK_OBSERVABILITY : FULL_OBSERVABILITY);
  results.observability = result;
  return observabilityTable(result);
}

async function versioningSection(quick: boolean, results: BenchResults): Promise<string> {
  const result = await versioning(quick);
  results.versioning = result;
  return versioningTables(result);
}

const SECTIONS: Record<BenchName, (quick: boolean, results: BenchResults) => Promise<string>> = {
  export: exportSection,
  jobs: jobsSection,
  memory: memorySection,
  polling: pollingSection,
  start: startSection,
  budgets: budgetsSection,
  history: historySection,
  followups: followUpsSection,
  scale: scaleSection,
  storage: storageSection,
  tracing: tracingSection,
  observability: observabilitySection,
  versioning: versioningSection,
  size: sizeSection,
};

export interface RunOptions {
  quick: boolean;
  /** `--tracing`: the follow-up benchmark with tracing off and on, alternating, in one run. */
  tracing?: boolean;
  only?: readonly BenchName[];
  /** Replace each benchmark's section of docs/benchmarks.md (full runs). */
  record: boolean;
  print?: (text: string) => void;
}

export async function runBenchmarks(options: RunOptions): Promise<BenchResults> {
  const results: BenchResults = { markdown: {}, seconds: {} };
  const print = options.print ?? ((text: string) => console.log(text));
  for (const name of options.only ?? BENCH_NAMES) {
    const traced = options.tracing === true && name === 'followups';
    const command = `npm run bench -- ${options.quick ? '--quick ' : ''}--only ${name}${traced ? ' --tracing' : ''}`;
    const started = performance.now();
    const body = traced
      ? await followUpsSection(options.quick, results, true)
      : await SECTIONS[name](options.quick, results);
    const seconds = (performance.now() - started) / 1000;
    results.seconds[name] = seconds;
    const section = `- Command: \`${command}\` (${seconds.toFixed(0)} s)\n${machine()}\n\n${body}`;
    results.markdown[name] = section;
    const title = traced ? TRACED_FOLLOW_UPS_TITLE : TITLES[name];
    print(`\n## ${title}\n\n${section}\n`);
    if (options.record) await recordSection(title, section);
  }
  return results;
}

export function parseArgs(argv: readonly string[]): { quick: boolean; only: BenchName[]; tracing?: true } {
  const quick = argv.includes('--quick');
  const tracing = argv.includes('--tracing') ? { tracing: true as const } : {};
  const onlyAt = argv.indexOf('--only');
  if (onlyAt < 0) return { quick, only: [...BENCH_NAMES], ...tracing };
  const names = (argv[onlyAt + 1] ?? '').split(',').filter((n) => n !== '');
  const unknown = names.filter((n) => !(BENCH_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(
      `--only: unknown benchmark "${unknown.join(',')}" (one or more of ${BENCH_NAMES.join(',')})`,
    );
  }
  return { quick, only: names as BenchName[], ...tracing };
}

/** `npm run bench [-- --quick] [-- --only export,jobs]`: prints each section; full runs record them in docs. */
async function main(): Promise<void> {
  const { quick, only, tracing } = parseArgs(process.argv.slice(2));
  const started = performance.now();
  await runBenchmarks({ quick, only, record: !quick, ...(tracing ? { tracing } : {}) });
  console.log(`\nBenchmarks done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
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
