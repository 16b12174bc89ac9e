import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startAgentJob } from '../src/client/agent-job';
import { startProcessStack } from '../dev/stack';
import { markdownTable } from './lib/report';

/** The last commit whose agentJob waited with one workflow timer per poll (before 'poll-in-activity'). */
export const TIMER_PER_POLL_COMMIT = 'bede82b';

/** Polled every second: the job's length at the simulator sets the number of polls. */
const EVERY_SECOND = {
  initialInterval: '1s',
  maxInterval: '1s',
  backoffCoefficient: 1,
  deadline: '10m',
} as const;

export interface HistoryEventsOptions {
  /** Job lengths at the simulator, in seconds (about one poll each). */
  jobSeconds: number[];
}
export const FULL_HISTORY: HistoryEventsOptions = { jobSeconds: [3, 10, 30, 60] };
export const QUICK_HISTORY: HistoryEventsOptions = { jobSeconds: [3, 10, 20] };

export interface HistoryEventsRow {
  code: string;
  jobSeconds: number;
  polls: number;
  events: number;
  workflowTasks: number;
}

interface Variant {
  code: string;
  bundle: string;
}

/** The workflows of `commit`, bundled from its sources (checked out under .tmp/, which git ignores). */
async function bundleAt(commit: string, dir: string): Promise<string> {
  const root = path.resolve(__dirname, '..');
  const sources = path.join(root, '.tmp', `history-events-${commit}`);
  await fs.rm(sources, { recursive: true, force: true });
  await fs.mkdir(sources, { recursive: true });
  const archive = execFileSync('git', ['-C', root, 'archive', commit, 'src'], { maxBuffer: 64 << 20 });
  execFileSync('tar', ['-x', '-C', sources], { input: archive });
  const file = path.join(dir, `${commit}.js`);
  await fs.writeFile(file, await bundle(path.join(sources, 'src', 'workflows')));
  return file;
}

async function bundle(workflowsPath: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
  });
  return code;
}

async function measure(variant: Variant, options: HistoryEventsOptions): Promise<HistoryEventsRow[]> {
  const stack = await startProcessStack({
    name: 'bench-history',
    workerEnv: { WORKER_WORKFLOW_BUNDLE: variant.bundle },
  });
  try {
    return await Promise.all(
      options.jobSeconds.map(async (seconds) => {
        const projectId = `history${seconds}`;
        stack.sim.configureProject(projectId, { jobs: { durationMs: seconds * 1000, outcome: 'completed' } });
        const input = { projectId, prompt: `A job of ${seconds} s`, polling: EVERY_SECOND };
        const handle = await startAgentJob(stack.client, input, { key: 'history' });
        await handle.result();
        const events = (await handle.fetchHistory()).events ?? [];
        const reads = stack.sim.requests().filter((r) => r.projectId === projectId && r.route === 'getJob');
        return {
          code: variant.code,
          jobSeconds: seconds,
          polls: reads.length,
          events: events.length,
          workflowTasks: events.filter((event) => event.workflowTaskCompletedEventAttributes).length,
        };
      }),
    );
  } finally {
    await stack.stop();
  }
}

/**
 * History written by one agentJob polled n times without follow-ups: the timer-per-poll workflow of
 * TIMER_PER_POLL_COMMIT against this tree's poll-in-activity workflow, each on a fresh stack, same simulator jobs.
 */
export async function historyEvents(options: HistoryEventsOptions): Promise<HistoryEventsRow[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'history-events-'));
  try {
    const current = path.join(dir, 'current.js');
    await fs.writeFile(current, await bundle(require.resolve('../src/workflows')));
    const variants: Variant[] = [
      {
        code: `timer per poll (${TIMER_PER_POLL_COMMIT})`,
        bundle: await bundleAt(TIMER_PER_POLL_COMMIT, dir),
      },
      { code: 'poll in activity (this tree)', bundle: current },
    ];
    const rows: HistoryEventsRow[] = [];
    for (const variant of variants) rows.push(...(await measure(variant, options)));
    return rows;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export function historyEventsTable(rows: HistoryEventsRow[]): string {
  return markdownTable(
    [
      'workflow code',
      'job length (s)',
      'polls (get-job reads)',
      'history events',
      'workflow tasks',
      'events per poll',
    ],
    rows.map((row) => [
      row.code,
      String(row.jobSeconds),
      String(row.polls),
      String(row.events),
      String(row.workflowTasks),
      row.polls > 0 ? (row.events / row.polls).toFixed(1) : 'n/a',
    ]),
  );
}
