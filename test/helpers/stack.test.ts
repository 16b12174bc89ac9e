import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort, isListening } from './ports';

const FIXTURE = path.join(__dirname, 'fixtures', 'failing-stack.ts');
/** A healthy run takes a few seconds; one that leaked a dev server would never end by itself. */
const FIXTURE_TIMEOUT_MS = 60_000;

const leftovers = async (): Promise<string[]> =>
  (await fs.readdir(os.tmpdir())).filter((name) => name.startsWith('failing-stack-'));

/** Runs the fixture in a process group of its own, so that a timeout also ends whatever it leaked. */
async function runFixture(port: number): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of printing.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...env, FAILING_STACK_PORT: String(port) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, FIXTURE_TIMEOUT_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output, timedOut };
}

test('useStack: a stack whose worker fails to start fails the file and leaves no dev server running', async () => {
  const port = await freePort();
  const dirsBefore = await leftovers();
  const run = await runFixture(port);

  assert.equal(run.timedOut, false, `the test process did not end by itself:\n${run.output}`);
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, /the worker cannot start \(on purpose\)/);
  assert.doesNotMatch(run.output, /the stack started at/);
  assert.equal(await isListening(port), false, `a dev server still listens on ${port}`);
  assert.deepEqual(await leftovers(), dirsBefore, 'the export directory was removed');
});
