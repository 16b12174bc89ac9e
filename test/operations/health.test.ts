import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { request } from 'undici';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { startTemporal } from '../../dev/temporal';
import { startWorkerProcess } from '../../dev/worker-process';
import { freePort } from '../../dev/ports';

let env: TestWorkflowEnvironment | undefined;
let sim: Simulator;

// A server of this file's own: the test stops it under a running worker.
before(async () => {
  env = await startTemporal();
  sim = await startSimulator();
});
after(async () => {
  try {
    await sim?.close();
  } finally {
    await env?.teardown();
  }
});

async function probe(port: number, path: '/livez' | '/readyz'): Promise<{ status: number; body: string }> {
  const response = await request(`http://127.0.0.1:${port}${path}`);
  return { status: response.statusCode, body: await response.body.text() };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('/readyz: 503 while starting, 200 while polling, 503 within 30 s of losing the server; /livez stays 200', async () => {
  assert.ok(env);
  const port = await freePort();
  const worker = startWorkerProcess({
    temporalAddress: env.address,
    service: sim,
    env: { WORKER_HEALTH_PORT: String(port) },
  });
  try {
    // The first answer comes while the workflow code is still being bundled: alive, not ready.
    const first = await until('the health server', async () => {
      const live = await probe(port, '/livez');
      return {
        live,
        ready: await probe(port, '/readyz'),
        started: worker.output().includes('Worker started'),
      };
    });
    assert.equal(first.live.status, 200);
    assert.equal(first.started, false, 'answered before the worker started');
    assert.equal(first.ready.status, 503, first.ready.body);

    await worker.ready;
    const ready = await until('readiness', async () => {
      const answer = await probe(port, '/readyz');
      return answer.status === 200 ? answer : undefined;
    });
    assert.match(ready.body, /worker running, server reachable/);

    await env.teardown();
    const lostAt = Date.now();
    env = undefined;
    const notReady = await until('/readyz 503 once the server is gone', async () => {
      const answer = await probe(port, '/readyz');
      return answer.status === 503 ? answer : undefined;
    });
    assert.ok(Date.now() - lostAt < 30_000, `503 after ${Date.now() - lostAt} ms`);
    assert.match(notReady.body, /server unreachable/);
    assert.equal((await probe(port, '/livez')).status, 200, 'alive without its server');
    assert.equal(worker.child.exitCode, null, 'the worker keeps running, waiting for its server');
  } finally {
    await worker.kill('SIGTERM');
  }
});

test('/readyz is 503 once shutdown begins, then the health server closes with the process', async () => {
  const temporal = await startTemporal();
  const port = await freePort();
  const worker = startWorkerProcess({
    temporalAddress: temporal.address,
    service: sim,
    env: { WORKER_HEALTH_PORT: String(port), WORKER_SHUTDOWN_GRACE_TIME: '5s' },
  });
  try {
    await worker.ready;
    await until('readiness', async () => ((await probe(port, '/readyz')).status === 200 ? true : undefined));
    const exited = worker.kill('SIGTERM');
    const answers: number[] = [];
    for (;;) {
      const answer = await probe(port, '/readyz').catch(() => undefined);
      if (answer === undefined) break;
      answers.push(answer.status);
    }
    assert.equal(await exited, 0, worker.output());
    const firstNotReady = answers.indexOf(503);
    assert.ok(firstNotReady >= 0, `503 while shutting down: ${answers.join(',')}`);
    assert.ok(!answers.slice(firstNotReady).includes(200), `no 200 after a 503: ${answers.join(',')}`);
  } finally {
    await worker.kill('SIGTERM');
    await temporal.teardown();
  }
});
