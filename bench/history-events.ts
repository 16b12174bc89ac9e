import { startAgentJob, type AgentJobHandle } from '../src/client/agent-job';
import { DEFAULT_POLLING } from '../src/contract/agent-job';
import { getStateQuery } from '../src/contract/messages';
import { agentJobWorkflowId } from '../src/contract/names';
import { resolvePolling } from '../src/workflows/agent-job/state';
import { startProcessStack, type ProcessStack } from '../dev/stack';
import { workflowBundlePath } from '../dev/workflow-bundle';
import { historyChain } from './lib/history';
import { pollSchedule } from './lib/poll-schedule';
import { markdownTable } from './lib/report';

const JOB_KEY = 'history';
const DAY_PROJECT = 'history-day';
const DAY_SECONDS = 24 * 3600;

/** Polled every second: the job's length at the simulator sets the number of polls. */
const EVERY_SECOND = {
  initialInterval: '1s',
  maxInterval: '1s',
  backoffCoefficient: 1,
  deadline: '10m',
} as const;

/** The reads of a job that runs 24 hours at the default polling (jittered as the workflow's own schedule). */
export const DAY_READS = pollSchedule(
  resolvePolling(undefined),
  agentJobWorkflowId(DAY_PROJECT, JOB_KEY),
  DAY_SECONDS * 1000,
).length;
export const DEFAULT_POLLING_TEXT = `${DEFAULT_POLLING.initialInterval} doubling to ${DEFAULT_POLLING.maxInterval}`;
/** A day's reads made 100 ms apart (the least interval a job accepts): minutes on the dev server, not a day. */
const EVERY_100_MS = {
  initialInterval: '100ms',
  maxInterval: '100ms',
  backoffCoefficient: 1,
  deadline: '30m',
} as const;

export interface HistoryEventsOptions {
  /** Job lengths at the simulator, in seconds (about one poll each). */
  jobSeconds: number[];
  /** One more row for this tree's code: a 24-hour job's DAY_READS reads, made 100 ms apart. */
  day: boolean;
}
export const FULL_HISTORY: HistoryEventsOptions = { jobSeconds: [3, 10, 30, 60], day: true };
export const QUICK_HISTORY: HistoryEventsOptions = { jobSeconds: [3, 10, 20], day: false };

export interface HistoryEventsRow {
  code: string;
  /** This tree's code. */
  current: boolean;
  /** The 24-hour job's row: its reads made 100 ms apart instead of at the default polling. */
  day: boolean;
  jobSeconds: number;
  polls: number;
  /** Over every run of the workflow, should it continue as new. */
  events: number;
  workflowTasks: number;
}

interface Variant {
  code: string;
  current: boolean;
  bundle: string;
}

async function measure(variant: Variant, options: HistoryEventsOptions): Promise<HistoryEventsRow[]> {
  const stack = await startProcessStack({
    name: 'bench-history',
    workerEnv: { WORKER_WORKFLOW_BUNDLE: variant.bundle },
  });
  try {
    const rows = options.jobSeconds.map(async (seconds) => {
      const projectId = `history${seconds}`;
      stack.sim.configureProject(projectId, { jobs: { durationMs: seconds * 1000, outcome: 'completed' } });
      const input = { projectId, prompt: `A job of ${seconds} s`, polling: EVERY_SECOND };
      const handle = await startAgentJob(stack.client, input, { key: JOB_KEY });
      await handle.result();
      return rowOf(stack, variant, projectId, handle, { day: false, jobSeconds: seconds });
    });
    // The day row for this tree only: the timer-per-poll code would write about 11 events per read.
    const day = options.day && variant.current ? [dayRow(stack, variant)] : [];
    return await Promise.all([...rows, ...day]);
  } finally {
    await stack.stop();
  }
}

/** A job kept active at the simulator until it has been read DAY_READS times, then completed. */
async function dayRow(stack: ProcessStack, variant: Variant): Promise<HistoryEventsRow> {
  stack.sim.configureProject(DAY_PROJECT, { jobs: { durationMs: 3_600_000, outcome: 'completed' } });
  const input = { projectId: DAY_PROJECT, prompt: `A day's ${DAY_READS} reads`, polling: EVERY_100_MS };
  const handle = await startAgentJob(stack.client, input, { key: JOB_KEY });
  const result = handle.result();
  let closed = false;
  result.then(
    () => (closed = true),
    () => (closed = true),
  );
  while (readsOf(stack, DAY_PROJECT).length < DAY_READS) {
    // A workflow that ends early (its deadline, a failure, the stack stopped) ends the wait with it.
    if (closed) throw new Error(`the day job closed after ${readsOf(stack, DAY_PROJECT).length} reads`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { jobId } = await handle.query(getStateQuery);
  if (jobId === null) throw new Error('the day job was read before its create was recorded');
  stack.sim.completeJob(jobId);
  await result;
  return rowOf(stack, variant, DAY_PROJECT, handle, { day: true, jobSeconds: DAY_SECONDS });
}

function readsOf(stack: ProcessStack, projectId: string) {
  return stack.sim.requests().filter((r) => r.projectId === projectId && r.route === 'getJob');
}

async function rowOf(
  stack: ProcessStack,
  variant: Variant,
  projectId: string,
  handle: AgentJobHandle,
  job: { day: boolean; jobSeconds: number },
): Promise<HistoryEventsRow> {
  const { events } = await historyChain(stack.client, handle.workflowId);
  return {
    code: variant.code,
    current: variant.current,
    ...job,
    polls: readsOf(stack, projectId).length,
    events: events.length,
    workflowTasks: events.filter((event) => event.workflowTaskCompletedEventAttributes).length,
  };
}

/**
 * History written by one agentJob polled n times without follow-ups, on a fresh stack. The timer-per-poll
 * workflow it replaced (one timer per poll) is not run again: its activities no longer exist; its figures are in
 * docs/benchmarks.md's history.
 */
export async function historyEvents(options: HistoryEventsOptions): Promise<HistoryEventsRow[]> {
  return measure(
    { code: 'poll in activity (this tree)', current: true, bundle: await workflowBundlePath() },
    options,
  );
}

export function historyEventsTable(rows: HistoryEventsRow[]): string {
  return markdownTable(
    [
      'workflow code',
      'polling',
      'job length (s)',
      'polls (get-job reads)',
      'history events',
      'workflow tasks',
      'events per poll',
    ],
    rows.map((row) => [
      row.code,
      row.day ? `${DEFAULT_POLLING_TEXT}'s reads, 100 ms apart` : 'every 1 s',
      String(row.jobSeconds),
      String(row.polls),
      String(row.events),
      String(row.workflowTasks),
      row.polls > 0 ? (row.events / row.polls).toFixed(1) : 'n/a',
    ]),
  );
}

/** Issue 17's history targets, from the rows of this tree's code. */
export function historyVerdict(rows: HistoryEventsRow[]): string {
  const current = rows.filter((row) => row.current);
  const polledOften = current.filter((row) => !row.day && row.polls >= 10);
  const day = current.find((row) => row.day);
  const verdict = (ok: boolean) => `**${ok ? 'met' : 'missed'}**`;
  const lines = [
    `Target of issue 17, O(1) events per job and at most 40 for a job polled 10+ times: ` +
      `${verdict(polledOften.length > 0 && polledOften.every((row) => row.events <= 40))} ` +
      `(${current.map((row) => `${row.events} events for ${row.polls} reads`).join(', ')}).`,
  ];
  if (day) {
    lines.push(
      `Under 100 events for a 24-hour job: ${verdict(day.events < 100)} (${day.events} events and ` +
        `${day.workflowTasks} workflow tasks for ${day.polls} reads, at least the ${DAY_READS} of a day at ` +
        `${DEFAULT_POLLING_TEXT}).`,
    );
  }
  return lines.join(' ');
}
