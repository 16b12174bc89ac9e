import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { request } from 'undici';
import { awaitAgentJob, startAgentJob } from '../../src/client/agent-job';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { startTemporal } from '../../dev/temporal';
import { startWorkerProcess, type WorkerProcess } from '../../dev/worker-process';
import { freePort } from '../../dev/ports';

let env: TestWorkflowEnvironment;
let sim: Simulator;

before(async () => {
  env = await startTemporal();
  sim = await startSimulator({ jobs: { durationMs: 300 } });
});
after(async () => {
  try {
    await sim?.close();
  } finally {
    await env?.teardown();
  }
});

interface LogLine {
  time: string;
  level: string;
  message: string;
  [field: string]: unknown;
}

/** Runs one agent job on a worker logging as `env` says; returns its stdout lines once it stopped. */
async function jobLogs(
  name: string,
  logEnv: Record<string, string>,
): Promise<{ lines: string[]; all: string }> {
  const healthPort = await freePort();
  const stdout: string[] = [];
  const worker: WorkerProcess = startWorkerProcess({
    temporalAddress: env.address,
    service: sim,
    env: { ...logEnv, WORKER_HEALTH_PORT: String(healthPort), TEMPORAL_TASK_QUEUE: name },
  });
  worker.child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString('utf8')));
  try {
    // Readiness, not the "Worker started" line: at LOG_LEVEL=error that line is filtered out.
    for (;;) {
      const status = await request(`http://127.0.0.1:${healthPort}/readyz`)
        .then((r) => (r.body.dump(), r.statusCode))
        .catch(() => 0);
      if (status === 200) break;
      if (worker.child.exitCode !== null) throw new Error(worker.output());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const handle = await startAgentJob(
      env.client,
      {
        projectId: name,
        prompt: 'Document the logs',
        polling: { initialInterval: '100ms', maxInterval: '200ms' },
      },
      { key: name, taskQueue: name },
    );
    assert.equal((await awaitAgentJob(env.client, handle.workflowId)).status, 'completed');
  } finally {
    assert.equal(await worker.kill('SIGTERM'), 0, worker.output());
  }
  const text = stdout.join('');
  return { lines: text.split('\n').filter((line) => line !== ''), all: worker.output() };
}

function assertNoKey(output: string): void {
  const secret = sim.apiKey.slice(sim.apiKey.indexOf('_') + 1);
  assert.ok(!output.includes(secret), 'the API key never appears in the logs');
}

test('LOG_FORMAT=json LOG_LEVEL=debug: every stdout line is one object, with the SDK fields and the core', async () => {
  const { lines, all } = await jobLogs('json-debug', { LOG_FORMAT: 'json', LOG_LEVEL: 'debug' });
  const parsed = lines.map((line) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      assert.fail(`not one JSON object: ${line}`);
    }
  });
  for (const entry of parsed) {
    assert.ok(!Number.isNaN(Date.parse(entry.time)), `time: ${entry.time}`);
    assert.ok(['error', 'warn', 'info', 'debug'].includes(entry.level), `level: ${entry.level}`);
    assert.equal(typeof entry.message, 'string');
  }
  assert.ok(parsed.some((e) => e.message === 'Worker started' && e.taskQueue === 'json-debug'));
  const workflowLine = parsed.find((e) => e.workflowType === 'agentJob' && typeof e.workflowId === 'string');
  assert.ok(workflowLine, 'a line of the workflow with its workflowId and type');
  const activityLine = parsed.find(
    (e) => typeof e.activityType === 'string' && e.workflowType === 'agentJob',
  );
  assert.ok(activityLine, 'a line of an activity with its type and workflow');
  assert.ok(
    parsed.some((e) => e.sdkComponent === 'core'),
    'the SDK core forwards its logs through the same logger',
  );
  assert.ok(all.includes('TaskToken(****)'), 'the core prints task tokens at debug');
  assert.doesNotMatch(all, /taskToken|TaskToken\((?!\*\*\*\*\))/, 'no task token in any line');
  assertNoKey(all);
});

test('LOG_LEVEL=error: nothing below error is written, and the worker still runs the job', async () => {
  const { lines, all } = await jobLogs('json-error', { LOG_FORMAT: 'json', LOG_LEVEL: 'error' });
  for (const line of lines) assert.equal((JSON.parse(line) as LogLine).level, 'error', line);
  assertNoKey(all);
});

test('text stays the default, on stderr', async () => {
  const { lines, all } = await jobLogs('text-default', {});
  assert.deepEqual(lines, [], 'nothing on stdout');
  assert.match(all, /\[INFO\] Worker started/);
  assertNoKey(all);
});
