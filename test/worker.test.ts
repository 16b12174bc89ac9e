import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { request } from 'undici';
import { awaitAgentJob, startAgentJob } from '../src/client/agent-job';
import { startSimulator, type Simulator } from '../dev/simulator';
import { startTemporal } from '../dev/temporal';
import { startWorkerProcess } from '../dev/worker-process';
import { freePort } from '../dev/ports';

let env: TestWorkflowEnvironment;
let sim: Simulator;

// No stack: its worker would take the job from the workers these tests start themselves.
before(async () => {
  env = await startTemporal();
  sim = await startSimulator({ jobs: { durationMs: 4000 } });
});
after(async () => {
  // Either may be unset (a failed start); the server is torn down even if closing the simulator throws.
  try {
    await sim?.close();
  } finally {
    await env?.teardown();
  }
});

test('SIGTERM with a job in flight: the worker drains and exits 0, a new worker finishes the job', async () => {
  const metricsPort = await freePort();
  const options = {
    temporalAddress: env.address,
    service: sim,
    env: { WORKER_METRICS_PORT: String(metricsPort) },
  };
  const first = startWorkerProcess(options);
  await first.ready;

  const metrics = await request(`http://127.0.0.1:${metricsPort}/metrics`);
  assert.equal(metrics.statusCode, 200);
  assert.match(await metrics.body.text(), /temporal_/, 'Prometheus metrics of the Temporal runtime');

  const handle = await startAgentJob(
    env.client,
    { projectId: 'sigterm', prompt: 'Long job', polling: { initialInterval: '300ms', maxInterval: '500ms' } },
    { key: 'k' },
  );
  while (sim.stats().requests.getJob < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await first.kill('SIGTERM'), 0, first.output());

  const second = startWorkerProcess({ temporalAddress: env.address, service: sim });
  try {
    await second.ready;
    const result = await awaitAgentJob(env.client, handle.workflowId);
    assert.equal(result.status, 'completed');
    assert.equal(sim.stats().jobsCreated, 1, 'exactly one job created across both workers');
  } finally {
    await second.kill('SIGTERM');
  }
  for (const output of [first.output(), second.output()]) {
    const secret = sim.apiKey.slice(sim.apiKey.indexOf('_') + 1);
    assert.ok(!output.includes(secret), 'the API key never appears in worker logs');
  }
});

test('a bad configuration stops the worker at start-up with a message naming the variable', async () => {
  const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.resolve(__dirname, '../src/worker.ts')],
      { env: { PATH: process.env.PATH ?? '', DOCS_API_KEY: 'not-a-key', TEMPORAL_ADDRESS: env.address } },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
  assert.equal(code, 1);
  assert.match(stderr, /DOCS_API_BASE_URL: is required/);
  assert.match(stderr, /DOCS_API_KEY: must have the form <prefix>_<secret>/);
  assert.ok(!stderr.includes('not-a-key'), 'the bad key is not echoed');
});
