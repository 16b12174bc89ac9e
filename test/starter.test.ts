import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { useStack } from './helpers/stack';

const STARTER = path.resolve(__dirname, '../src/starter.ts');

const stack = useStack({
  name: 'starter',
  simulator: { analytics: { paths: 60 }, jobs: { durationMs: 300 } },
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<CliRun> {
  return cliWatching(args).done;
}

/** The CLI with more environment, e.g. another TEMPORAL_TASK_QUEUE. */
function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return cliWatching(args, undefined, env).done;
}

/**
 * Runs the CLI; `seen` resolves with the first match of `pattern` in its output while it runs (it rejects if
 * the CLI exits first, and stops it when nothing matched within a minute), `done` when it exits.
 */
function cliWatching(
  args: string[],
  pattern?: RegExp,
  extraEnv: Record<string, string> = {},
): { seen: Promise<RegExpExecArray>; done: Promise<CliRun> } {
  let output = '';
  let found: (match: RegExpExecArray) => void = () => undefined;
  let exited: (reason: Error) => void = () => undefined;
  const seen = new Promise<RegExpExecArray>((resolve, reject) => {
    found = resolve;
    exited = reject;
  });
  seen.catch(() => undefined);
  const done = new Promise<CliRun>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          TEMPORAL_ADDRESS: stack.env.address,
          TEMPORAL_NAMESPACE: 'default',
          ...extraEnv,
        },
      },
      (error, stdout, stderr) => {
        exited(new Error(`the CLI exited before printing ${String(pattern)}:\n${stdout}\n${stderr}`));
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
    const timer = pattern === undefined ? undefined : setTimeout(() => child.kill(), 60_000);
    child.on('exit', () => clearTimeout(timer));
    child.stdout?.on('data', (chunk: Buffer | string) => {
      output += String(chunk);
      const match = pattern?.exec(output);
      if (!match) return;
      clearTimeout(timer);
      found(match);
    });
  });
  return { seen, done };
}

async function workflowCount(): Promise<number> {
  let count = 0;
  for await (const _ of stack.env.client.workflow.list()) count += 1;
  return count;
}

describe('starter CLI', () => {
  test('--help lists every group, a group its commands; each command has its own help', async () => {
    const overview = await cli('--help');
    assert.equal(overview.code, 0);
    for (const group of ['setup', 'job', 'export', 'schedule']) {
      assert.match(overview.stdout, new RegExp(`^  ${group} `, 'm'));
    }
    for (const [group, command] of [
      ['job', 'start'],
      ['job', 'message'],
      ['job', 'status'],
      ['job', 'list'],
      ['export', 'run'],
      ['schedule', 'backfill'],
    ] as const) {
      assert.match((await cli(group, '--help')).stdout, new RegExp(`^  ${command} \\[options\\]`, 'm'));
    }
    const help = await cli('export', 'run', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--page-size <n> +rows per page, 1\.\.250/);
  });

  const badArguments: [string, string[], RegExp][] = [
    ['unknown command', ['job', 'launch'], /unknown command 'launch'/],
    [
      'missing --project',
      ['job', 'start', '--prompt', 'x'],
      /required option '--project <id>' not specified/,
    ],
    ['empty prompt', ['job', 'start', '--project', 'p', '--prompt', ''], /prompt: must not be empty/],
    [
      'projectId with /',
      ['job', 'start', '--project', 'a/b', '--prompt', 'x'],
      /--project: must start with a letter/,
    ],
    ['unknown flag', ['job', 'status', '--bogus', 'x'], /unknown option '--bogus'/],
    [
      'inverted dates',
      ['export', 'run', '--project', 'p', '--from', '2026-11-02', '--to', '2026-11-01'],
      /--to: must be after dateFrom/,
    ],
    [
      'page size 251',
      ['export', 'run', '--project', 'p', '--from', '2026-11-01', '--to', '2026-11-02', '--page-size', '251'],
      /--page-size: must be at most 250/,
    ],
    [
      'non-numeric concurrency',
      [
        'export',
        'run',
        '--project',
        'p',
        '--from',
        '2026-11-01',
        '--to',
        '2026-11-02',
        '--concurrency',
        'many',
      ],
      /--concurrency: must be an integer/,
    ],
    [
      'bad time of day',
      ['schedule', 'create', '--project', 'p', '--at', '7pm'],
      /at: must be a time of day HH:MM/,
    ],
  ];
  for (const [name, args, message] of badArguments) {
    test(`bad arguments: ${name} -> exit 2, nothing started`, async () => {
      const before = await workflowCount();
      const run = await cli(...args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.equal(await workflowCount(), before);
    });
  }

  test('export run --json writes the export and prints the result', async () => {
    const range = ['--project', 'cli-export', '--from', '2026-11-01', '--to', '2026-11-02'];
    const run = await cli('export', 'run', ...range, '--page-size', '25', '--json');
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { rows: number; pages: number; files: string[] };
    assert.equal(result.rows, 60);
    assert.equal(result.pages, 3);
    const csv = await fs.readFile(
      path.join(stack.exportDir, 'cli-export', '2026-11-01_2026-11-02', 'visitors.csv'),
      'utf8',
    );
    assert.equal(csv.trim().split('\n').length, 61);

    const status = await cli('export', 'status', ...range, '--json');
    assert.equal(status.code, 0, status.stderr);
    const shown = JSON.parse(status.stdout) as { workflow: string; result: { rows: number } };
    assert.equal(shown.workflow, 'COMPLETED');
    assert.equal(shown.result.rows, 60);
    const deadline = Date.now() + 10_000;
    let listed: CliRun | undefined;
    while (Date.now() < deadline && !listed?.stdout.includes('visitors-export/cli-export/')) {
      listed = await cli('export', 'list', '--project', 'cli-export');
    }
    assert.equal(listed?.code, 0, listed?.stderr);
    assert.match(listed?.stdout ?? '', /^visitors-export\/cli-export\/2026-11-01_2026-11-02\s+COMPLETED\s/m);
    const others = await cli('export', 'list', '--project', 'nobody-here');
    assert.equal(others.stdout.trim(), 'no exports');
    const missing = await cli(
      'export',
      'status',
      '--project',
      'cli-export',
      '--from',
      '2020-01-01',
      '--to',
      '2020-01-02',
    );
    assert.equal(missing.code, 3, missing.stderr);
  });

  test('export run --tz: days of the zone, in their own folder; schedule backfill and describe in days', async () => {
    // The Paris day 2026-11-01, by export run and export status.
    const parisDay = [
      '--project',
      'cli-tz',
      '--from',
      '2026-11-01',
      '--to',
      '2026-11-02',
      '--tz',
      'Europe/Paris',
    ];
    const run = await cli('export', 'run', ...parisDay, '--json');
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { timeZone: string; dateFrom: string; files: string[] };
    assert.equal(result.timeZone, 'Europe/Paris');
    assert.equal(result.dateFrom, '2026-11-01');
    await fs.access(
      path.join(stack.exportDir, 'cli-tz', '2026-11-01_2026-11-02_Europe-Paris', 'manifest.json'),
    );
    const sent = stack.sim.requests().filter((r) => r.route === 'getVisitors' && r.projectId === 'cli-tz');
    assert.deepEqual(
      [...new Set(sent.map((r) => `${r.query.dateFrom}_${r.query.dateTo}`))],
      ['2026-11-01T00:00:00+01:00_2026-11-02T00:00:00+01:00'],
    );

    const status = await cli('export', 'status', ...parisDay, '--json');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /2026-11-01_2026-11-02_Europe-Paris/);

    const help = await cli('schedule', 'backfill', '--help');
    assert.match(
      help.stdout,
      /--from 2026-11-09\s+--to\s+2026-11-12\s+exports\s+the\s+9th,\s+10th\s+and\s+11th/,
    );
    assert.match(help.stdout, /--to is the day after the last, excluded/);
    assert.equal(
      (await cli('schedule', 'create', '--project', 'cli-tz', '--at', '02:30', '--tz', 'Europe/Paris')).code,
      0,
    );
    const backfill = await cli(
      'schedule',
      'backfill',
      '--project',
      'cli-tz',
      '--from',
      '2026-11-03',
      '--to',
      '2026-11-05',
      '--json',
    );
    assert.equal(backfill.code, 0, backfill.stderr);
    const started = JSON.parse(backfill.stdout) as { days: { day: string; workflowId: string }[] };
    assert.deepEqual(
      started.days.map((d) => d.workflowId),
      [
        'visitors-export/cli-tz/2026-11-03_2026-11-04_Europe-Paris',
        'visitors-export/cli-tz/2026-11-04_2026-11-05_Europe-Paris',
      ],
    );
    for (const { workflowId } of started.days) await stack.env.client.workflow.getHandle(workflowId).result();
    const described = await cli('schedule', 'describe', '--project', 'cli-tz');
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /latest run: none yet/);
    assert.match(described.stdout, /missing: nothing/);
    assert.match(described.stdout, /next run: \S+ exports \d{4}-\d{2}-\d{2}/);
    assert.equal((await cli('schedule', 'delete', '--project', 'cli-tz')).code, 0);
  });

  test('schedule create, describe, update, pause, delete; describe of a missing schedule exits 3', async () => {
    assert.equal(
      (await cli('schedule', 'create', '--project', 'cli-sched', '--at', '03:00', '--tz', 'Europe/Paris'))
        .code,
      0,
    );
    const described = await cli('schedule', 'describe', '--project', 'cli-sched', '--json');
    assert.equal(described.code, 0, described.stderr);
    assert.equal((JSON.parse(described.stdout) as { timeZone: string }).timeZone, 'Europe/Paris');
    const updated = await cli('schedule', 'update', '--project', 'cli-sched', '--concurrency', '2');
    assert.equal(updated.code, 0, updated.stderr);
    const afterUpdate = JSON.parse(
      (await cli('schedule', 'describe', '--project', 'cli-sched', '--json')).stdout,
    ) as {
      timeZone: string;
      calendars: { hour: { start: number }[] }[];
    };
    assert.equal(afterUpdate.timeZone, 'Europe/Paris', 'a zone not given to update is kept');
    assert.equal(afterUpdate.calendars[0]?.hour[0]?.start, 3, 'a time not given to update is kept');
    const badUpdate = await cli('schedule', 'update', '--project', 'cli-sched', '--tz', 'Mars/Olympus');
    assert.equal(badUpdate.code, 2);
    assert.match(badUpdate.stderr, /--tz: must be an IANA time zone/);
    const taskQueueOf = async (): Promise<string | undefined> => {
      const { action } = await stack.env.client.schedule
        .getHandle('visitors-export-nightly/cli-sched')
        .describe();
      return action.type === 'startWorkflow' ? action.taskQueue : undefined;
    };
    assert.equal(await taskQueueOf(), 'docs-agent');
    const elsewhere = await cliWith(
      { TEMPORAL_TASK_QUEUE: 'caller-default' },
      'schedule',
      'update',
      '--project',
      'cli-sched',
      '--at',
      '04:00',
    );
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.equal(
      await taskQueueOf(),
      'docs-agent',
      "the caller's TEMPORAL_TASK_QUEUE does not move the schedule",
    );
    const moved = await cli(
      'schedule',
      'update',
      '--project',
      'cli-sched',
      '--task-queue',
      'nightly-exports',
    );
    assert.equal(moved.code, 0, moved.stderr);
    assert.equal(await taskQueueOf(), 'nightly-exports', '--task-queue does');
    assert.equal((await cli('schedule', 'pause', '--project', 'cli-sched')).code, 0);
    assert.equal(
      (
        JSON.parse((await cli('schedule', 'describe', '--project', 'cli-sched', '--json')).stdout) as {
          paused: boolean;
        }
      ).paused,
      true,
    );
    assert.equal((await cli('schedule', 'delete', '--project', 'cli-sched')).code, 0);
    const missing = await cli('schedule', 'describe', '--project', 'cli-sched');
    assert.equal(missing.code, 3);
  });

  test('job start --wait prints the PR link; status and list find the job', async () => {
    const run = await cli(
      'job',
      'start',
      '--project',
      'cli-job',
      '--prompt',
      'Fix typos',
      '--key',
      'k1',
      '--initial-interval',
      '200ms',
      '--wait',
      '--json',
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { status: string; prLink: string | null };
    assert.equal(result.status, 'completed');
    assert.match(result.prLink ?? '', /\/pull\/\d+$/);
    const status = await cli('job', 'status', '--project', 'cli-job', '--key', 'k1');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /pull request: https:/);
    // Which model worked on it and which branch the pull request came from.
    assert.match(status.stdout, /^model: sim-agent-1$/m);
    assert.match(status.stdout, /^source: https:\/\/github\.com\/sim-org\/cli-job-docs, branch main$/m);
    const waited = await cli(
      'job',
      'start',
      '--project',
      'cli-job',
      '--prompt',
      'Fix more typos',
      '--key',
      'k2',
      '--initial-interval',
      '200ms',
      '--wait',
    );
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(waited.stdout, /^model: sim-agent-1$/m);
    assert.match(waited.stdout, /^source: https:\/\/github\.com\/sim-org\/cli-job-docs, branch main$/m);
    const deadline = Date.now() + 10_000;
    let listed = '';
    while (Date.now() < deadline && !listed.includes('agent-job/cli-job/k1')) {
      listed = (await cli('job', 'list', '--project', 'cli-job')).stdout;
    }
    assert.match(listed, /agent-job\/cli-job\/k1\s+COMPLETED\s+completed/);
    assert.equal(stack.sim.stats().jobsCreated, 2);
  });

  test('while the job runs, the --wait live line and job status show its model and source', async () => {
    // Active until the test completes it: everything below is printed before the job ends.
    stack.sim.configureProject('cli-running', { jobs: { durationMs: 600_000, outcome: 'completed' } });
    const source = 'source: https://github\\.com/sim-org/cli-running-docs, branch main';
    const waiting = cliWatching(
      [
        'job',
        'start',
        '--project',
        'cli-running',
        '--prompt',
        'Rewrite the FAQ',
        '--key',
        'live',
        '--initial-interval',
        '200ms',
        '--wait',
      ],
      new RegExp(
        `^job (job_\\w+): active; polls: \\d+, next poll: [^;]+; model: sim-agent-1; ${source}$`,
        'm',
      ),
    );
    const [, jobId = ''] = await waiting.seen;
    const status = await cli('job', 'status', '--project', 'cli-running', '--key', 'live');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`^job ${jobId}: active$`, 'm'));
    assert.match(status.stdout, /^model: sim-agent-1$/m);
    assert.match(status.stdout, new RegExp(`^${source}$`, 'm'));
    const json = await cli('job', 'status', '--project', 'cli-running', '--key', 'live', '--json');
    const { state } = JSON.parse(json.stdout) as { state: { model?: string; source?: unknown } };
    assert.equal(state.model, 'sim-agent-1');
    assert.deepEqual(state.source, {
      repository: 'https://github.com/sim-org/cli-running-docs',
      ref: 'main',
    });

    stack.sim.completeJob(jobId);
    const waited = await waiting.done;
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(waited.stdout, new RegExp(`^job ${jobId}: completed after \\d+ polls$`, 'm'));
  });

  test('a failed job: job start --wait and job status exit 1', async () => {
    stack.sim.configureProject('cli-failed', { jobs: { durationMs: 300, outcome: 'failed' } });
    const args = ['--project', 'cli-failed', '--key', 'doomed'];
    const run = await cli(
      'job',
      'start',
      ...args,
      '--prompt',
      'Will fail',
      '--initial-interval',
      '200ms',
      '--wait',
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^job ended: AgentJobFailed: /m);
    const status = await cli('job', 'status', ...args);
    assert.equal(status.code, 1, status.stderr);
    assert.match(status.stdout, /^FAILED: /);
  });

  test('job cancel stops a running job: CANCELLED, status exits 1; a closed one is not cancelled again', async () => {
    stack.sim.configureProject('cli-cancel', { jobs: { durationMs: 600_000, outcome: 'completed' } });
    const args = ['--project', 'cli-cancel', '--key', 'stop-me'];
    const started = await cli('job', 'start', ...args, '--prompt', 'Long job', '--initial-interval', '200ms');
    assert.equal(started.code, 0, started.stderr);
    const cancelled = await cli('job', 'cancel', ...args);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, /^cancellation requested for agent-job\/cli-cancel\/stop-me/);
    const result = stack.env.client.workflow.getHandle('agent-job/cli-cancel/stop-me').result();
    await assert.rejects(result, /cancel/i);
    const status = await cli('job', 'status', ...args);
    assert.equal(status.code, 1, status.stderr);
    assert.match(status.stdout, /^CANCELLED/);
    const again = await cli('job', 'cancel', ...args, '--json');
    assert.equal(again.code, 1);
    assert.deepEqual(JSON.parse(again.stdout), {
      workflowId: 'agent-job/cli-cancel/stop-me',
      cancelled: false,
      workflow: 'CANCELLED',
    });
    assert.equal((await cli('job', 'cancel', '--project', 'cli-cancel', '--key', 'never-started')).code, 3);
  });
});
