import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitAgentJob, startAgentJob } from '../../src/client/agent-job';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { startTemporal } from '../../dev/temporal';
import { startWorkerProcess } from '../../dev/worker-process';
import { freePort } from '../../dev/ports';

let sim: Simulator;
let server: TestWorkflowEnvironment | undefined;

before(async () => {
  sim = await startSimulator({ jobs: { durationMs: 300 } });
});
after(async () => {
  try {
    await server?.teardown();
  } finally {
    await sim?.close();
  }
});

interface LogLine {
  level: string;
  message: string;
  [field: string]: unknown;
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every key of a parsed line, at any depth. */
function keysOf(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, field]) => [key, ...keysOf(field)]);
}

test('a server outage is one error line and one info line; an activity failure carries no task token', async () => {
  const name = 'outage';
  const port = await freePort();
  server = await startTemporal({ port });
  const address = server.address;
  const stdout: string[] = [];
  const lines = () =>
    stdout
      .join('')
      .split('\n')
      .slice(0, -1) // what follows the last newline is not a whole line yet
      .map((line) => JSON.parse(line) as LogLine);
  const worker = startWorkerProcess({
    temporalAddress: address,
    service: sim,
    env: { LOG_FORMAT: 'json', TEMPORAL_TASK_QUEUE: name },
  });
  worker.child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString('utf8')));
  try {
    await worker.ready;
    await server.teardown();
    server = undefined;
    const lostFrom = lines().length;
    const lost = await until('the error line', () => lines().find((l) => l.level === 'error'), 45_000);
    assert.match(lost.message, new RegExp(`^Lost the Temporal server at ${address}: server unreachable`));

    // The same port, so the worker's connection finds it again.
    server = await startTemporal({ port });
    const back = await until(
      'the line saying the server is back',
      () => lines().find((l) => l.message.includes('reachable again')),
      30_000,
    );
    assert.equal(back.level, 'info');
    assert.match(back.message, new RegExp(`^Temporal server at ${address} reachable again after \\d+ s`));
    const sofar = lines();
    const outage = sofar.slice(lostFrom, sofar.findIndex((l) => l.message === back.message) + 1);
    assert.deepEqual(
      outage.filter((l) => l.level === 'error').map((l) => l.message),
      [lost.message],
      'one error line',
    );
    const warnings = outage.filter((l) => l.level === 'warn');
    assert.ok(warnings.length <= 2, `the core's retries are folded, not ${warnings.length} warnings`);

    // Polling resumed: a job runs, and its first poll fails once.
    sim.faults.add({ route: 'getJob', projectId: name, kind: 'status', status: 503, times: 1 });
    const handle = await startAgentJob(
      server.client,
      {
        projectId: name,
        prompt: 'Document the outage',
        polling: { initialInterval: '100ms', maxInterval: '200ms' },
      },
      { key: name, taskQueue: name },
    );
    assert.equal((await awaitAgentJob(server.client, handle.workflowId)).status, 'completed');
  } finally {
    assert.equal(await worker.kill('SIGTERM'), 0, worker.output());
  }
  const all = lines();
  const failed = all.find((l) => l.message === 'Activity failed');
  assert.ok(failed, 'the failed poll is logged');
  assert.equal(failed.activityType, 'pollAgentJob');
  assert.deepEqual(
    all.flatMap(keysOf).filter((key) => /token/i.test(key)),
    [],
    'no line has a token field',
  );
  assert.doesNotMatch(worker.output(), /taskToken|task_token/);
  assert.ok(!worker.output().includes(sim.apiKey.slice(sim.apiKey.indexOf('_') + 1)), 'nor the API key');
});
