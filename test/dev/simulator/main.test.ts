import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, test } from 'node:test';
import { call } from './http-client';

const MAIN = path.resolve(__dirname, '../../../dev/simulator/main.ts');
/** The tsx command line, run by this node: it relays SIGINT and SIGTERM to the program. */
const TSX_CLI = require.resolve('tsx/cli');

interface Run {
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [TSX_CLI, MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => ({ stdout, stderr }), exited };
}

async function listening(r: Run): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const url = /simulator listening on (http:\/\/\S+)/.exec(r.output().stdout)?.[1];
    if (url) return url;
    if (r.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`the simulator did not start: ${JSON.stringify(r.output())}`);
}

describe('standalone command', () => {
  test('generated key: masked unless --print-key; flags apply; SIGTERM stops it cleanly', async () => {
    const r = run([
      '--port',
      '0',
      '--paths',
      '7',
      '--job-duration-ms',
      '0',
      '--outcome',
      'failed',
      '--print-key',
    ]);
    try {
      const url = await listening(r);
      const key = /generated API key (\S+)/.exec(r.output().stdout)?.[1] ?? '';
      assert.match(key, /^sim_[0-9a-f]{32}$/);
      const sim = { url, apiKey: key };
      const created = await call(sim, 'POST', '/v2/agent/p/job', { body: { prompt: 'x' } });
      assert.equal(created.status, 201);
      const job = await call(sim, 'GET', `/v2/agent/p/job/${(created.json as { id: string }).id}`);
      assert.equal((job.json as { status: string }).status, 'failed');
      const page = await call(sim, 'GET', '/v1/analytics/p/visitors?dateFrom=2026-11-01&dateTo=2026-11-02');
      assert.equal((page.json as { visitors: unknown[] }).visitors.length, 7);
      assert.equal((await call(sim, 'GET', '/__sim/stats', { key: null })).status, 200);
    } finally {
      r.child.kill('SIGTERM');
    }
    assert.equal(await r.exited, 0);
  });

  test('without --print-key only the prefix shows; DOCS_API_KEY is accepted and never printed', async () => {
    const generated = run(['--port', '0']);
    const masked = run(['--port', '0'], { DOCS_API_KEY: 'mint_topsecretvalue' });
    try {
      await Promise.all([listening(generated), listening(masked)]);
      assert.match(generated.output().stdout, /generated API key sim_\*\*\*\* /);
      assert.doesNotMatch(generated.output().stdout, /sim_[0-9a-f]{32}/);
      const out = masked.output().stdout;
      assert.match(out, /mint_\*\*\*\*/);
      assert.ok(!out.includes('topsecretvalue'));
      const url = /listening on (\S+)/.exec(out)?.[1] ?? '';
      const answer = await call({ url, apiKey: 'mint_topsecretvalue' }, 'GET', '/v1/analytics/p/visitors');
      assert.equal(answer.status, 200);
    } finally {
      generated.child.kill('SIGINT');
      masked.child.kill('SIGTERM');
    }
    assert.deepEqual(await Promise.all([generated.exited, masked.exited]), [0, 0]);
  });

  test('bad flags and a malformed DOCS_API_KEY: exit code 2 with a message naming them', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--port', 'abc'], {}, /--port/],
      [['--port', '70000'], {}, /--port/],
      [['--paths', '-3'], {}, /paths/],
      [['--outcome', 'exploded'], {}, /--outcome/],
      [['--bogus'], {}, /bogus/],
      [[], { DOCS_API_KEY: 'no-underscore' }, /DOCS_API_KEY/],
    ];
    const runs = cases.map(([args, env]) => run(args, env));
    const codes = await Promise.all(runs.map((r) => r.exited));
    cases.forEach(([args, , pattern], i) => {
      const { stderr } = runs[i]?.output() ?? { stderr: '' };
      assert.equal(codes[i], 2, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr, pattern);
    });
    assert.ok(!(runs[5]?.output().stderr ?? '').includes('no-underscore'));
  });
});
