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

/**
 * Runs the CLI; `seen` resolves with the first match of `pattern` in its output while it runs (it rejects if
 * the CLI exits first, and stops it when nothing matched within a minute), `done` when it exits.
 */
function cliWatching(
  args: string[],
  pattern?: RegExp,
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
  test('--help lists every command; each command has its own help', async () => {
    const overview = await cli('--help');
    assert.equal(overview.code, 0);
    for (const command of [
      'job start',
      'job message',
      'job status',
      'job list',
      'export run',
      'schedule backfill',
    ]) {
      assert.match(overview.stdout, new RegExp(command));
    }
    const help = await cli('export', 'run', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--page-size <value>/);
  });

  const badArguments: [string, string[], RegExp][] = [
    ['unknown command', ['job', 'launch'], /unknown command "job launch"/],
    ['missing --project', ['job', 'start', '--prompt', 'x'], /--project is required/],
    ['empty prompt', ['job', 'start', '--project', 'p', '--prompt', ''], /prompt: must not be empty/],
    [
      'projectId with /',
      ['job', 'start', '--project', 'a/b', '--prompt', 'x'],
      /projectId: must start with a letter/,
    ],
    ['unknown flag', ['job', 'status', '--bogus', 'x'], /Unknown option '--bogus'/],
    [
      'inverted dates',
      ['export', 'run', '--project', 'p', '--from', '2026-11-02', '--to', '2026-11-01'],
      /dateTo: must be after dateFrom/,
    ],
    [
      'page size 251',
      ['export', 'run', '--project', 'p', '--from', '2026-11-01', '--to', '2026-11-02', '--page-size', '251'],
      /pageSize: must be at most 250/,
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
    const run = await cli(
      'export',
      'run',
      '--project',
      'cli-export',
      '--from',
      '2026-11-01',
      '--to',
      '2026-11-02',
      '--page-size',
      '25',
      '--json',
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { rows: number; pages: number; files: string[] };
    assert.equal(result.rows, 60);
    assert.equal(result.pages, 3);
    const csv = await fs.readFile(
      path.join(stack.exportDir, 'cli-export', '2026-11-01_2026-11-02', 'visitors.csv'),
      'utf8',
    );
    assert.equal(csv.trim().split('\n').length, 61);
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
    assert.match(badUpdate.stderr, /timeZone: must be an IANA time zone/);
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
        `^job (job_\\w+): active, \\d+ polls, 0 pending follow-ups; model: sim-agent-1; ${source}$`,
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
});
