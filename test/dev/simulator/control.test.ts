import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, test } from 'node:test';
import { request } from 'undici';
import { startSimulator, type RequestLogEntry, type SimulatorStats } from '../../../dev/simulator';
import { asError, asJob, asPage, call } from './http-client';
import { useSimulator } from './use-simulator';

const DAY = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
const h = useSimulator({ jobs: { durationMs: 60_000 } });

/** Control routes need no key. */
const control = (method: 'GET' | 'POST' | 'DELETE' | 'PUT', path: string, body?: unknown, raw?: string) =>
  call(h.sim, method, path, { key: null, ...(body !== undefined ? { body } : {}), ...(raw ? { raw } : {}) });

describe('/__sim/ control routes', () => {
  test('POST /__sim/projects/:projectId configures jobs and data-set size', async () => {
    const answer = await control('POST', '/__sim/projects/demo', {
      jobs: { durationMs: 0, outcome: 'failed' },
      visitorPaths: 3,
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, {
      projectId: 'demo',
      jobs: { durationMs: 0, outcome: 'failed', archiveAfterMs: 0 },
      visitorPaths: 3,
      errorBodies: 'service',
    });
    assert.match(String(answer.headers['x-request-id']), /^req_\d+$/);
    const job = asJob(await h.ops.createJob('demo'));
    assert.equal(asJob(await h.ops.getJob('demo', job.id)).status, 'failed');
    assert.equal(asPage(await h.ops.visitors('demo', DAY)).visitors.length, 3);
    const merged = await control('POST', '/__sim/projects/demo', { jobs: { outcome: 'completed' } });
    assert.deepEqual(merged.json, {
      projectId: 'demo',
      jobs: { durationMs: 0, outcome: 'completed', archiveAfterMs: 0 },
      visitorPaths: 3,
      errorBodies: 'service',
    });
  });

  test('bodies are validated: 400 naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['/__sim/projects/demo', { jobs: { durationMs: -1 } }, 'jobs.durationMs'],
      ['/__sim/projects/demo', { jobs: { outcome: 'exploded' } }, 'jobs.outcome'],
      ['/__sim/projects/demo', { visitorPaths: 1.5 }, 'visitorPaths'],
      ['/__sim/projects/demo', { colour: 'red' }, 'colour'],
      ['/__sim/faults', { route: 'getJob' }, 'kind'],
      ['/__sim/faults', { route: 'getJob', kind: 'status' }, 'status'],
      ['/__sim/faults', { route: 'getJob', kind: 'rateLimit', retryAfter: { minutes: 1 } }, 'retryAfter'],
      ['/__sim/faults', { route: 'getJob', kind: 'hang', times: 0 }, 'times'],
      ['/__sim/jobs/job_x/complete', { outcome: 'done' }, 'outcome'],
    ];
    for (const [path, body, field] of cases) {
      const answer = await control('POST', path, body);
      assert.equal(answer.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(asError(answer).code, 'invalid_request');
      assert.ok(
        asError(answer).field?.startsWith(field),
        `${asError(answer).field} for ${JSON.stringify(body)}`,
      );
    }
    const notJson = await control('POST', '/__sim/faults', undefined, '{route');
    assert.equal(notJson.status, 400);
    assert.equal(asError(notJson).field, 'body');
    assert.deepEqual(h.sim.faults.list(), []);
  });

  test('faults: add, list, remove one, clear', async () => {
    const added = await control('POST', '/__sim/faults', {
      route: 'getJob',
      kind: 'status',
      status: 503,
      times: 1,
    });
    assert.equal(added.status, 201);
    const { id } = added.json as { id: string };
    const second = await control('POST', '/__sim/faults', { route: '*', kind: 'latency', latencyMs: 1 });
    const listed = await control('GET', '/__sim/faults');
    assert.deepEqual(listed.json, [
      { id, remaining: 1, rule: { route: 'getJob', kind: 'status', status: 503, times: 1 } },
      {
        id: (second.json as { id: string }).id,
        remaining: null,
        rule: { route: '*', kind: 'latency', latencyMs: 1 },
      },
    ]);
    assert.equal((await h.ops.getJob('p1', 'job_x')).status, 503);
    assert.equal((await control('DELETE', `/__sim/faults/${id}`)).status, 404, 'used up already');
    assert.equal(
      (await control('DELETE', `/__sim/faults/${(second.json as { id: string }).id}`)).status,
      204,
    );
    await control('POST', '/__sim/faults', { route: 'getJob', kind: 'hang' });
    assert.equal((await control('DELETE', '/__sim/faults')).status, 204);
    assert.deepEqual(h.sim.faults.list(), []);
  });

  test('jobs: snapshot with messages; complete with an outcome; 404 for an unknown job', async () => {
    const job = asJob(await h.ops.createJob('p1', { prompt: 'Start' }));
    await h.ops.sendMessage('p1', job.id, { prompt: 'Then this' });
    const snapshot = await control('GET', `/__sim/jobs/${job.id}`);
    assert.equal(snapshot.status, 200);
    const body = snapshot.json as {
      status: string;
      prompt: string;
      projectId: string;
      messages: { prompt: string }[];
    };
    assert.deepEqual(
      [body.status, body.prompt, body.projectId, body.messages.map((m) => m.prompt)],
      ['active', 'Start', 'p1', ['Then this']],
    );
    const completed = await control('POST', `/__sim/jobs/${job.id}/complete`, {
      outcome: 'completed-no-edits',
    });
    assert.equal(completed.status, 200);
    assert.equal((completed.json as { status: string }).status, 'completed');
    assert.equal(asJob(await h.ops.getJob('p1', job.id)).prLink, null);
    const noBody = await control('POST', `/__sim/jobs/${job.id}/complete`);
    assert.equal(noBody.status, 200, 'the outcome is optional');
    assert.equal((await control('GET', '/__sim/jobs/job_missing')).status, 404);
    assert.equal((await control('POST', '/__sim/jobs/job_missing/complete', {})).status, 404);
  });

  test('stats, requests (with since) and reset', async () => {
    await h.ops.createJob('p1');
    await h.ops.visitors('p1', DAY);
    await call(h.sim, 'GET', '/v1/analytics/p1/visitors', { key: 'mint_wrong' });
    const stats = (await control('GET', '/__sim/stats')).json as SimulatorStats;
    assert.deepEqual(stats, {
      requests: { createJob: 1, getJob: 0, sendMessage: 0, getVisitors: 2 },
      jobsCreated: 1,
      jobsCreatedByProject: { p1: 1 },
      messagesAccepted: 0,
      budgetRefusals: { analytics: 0, agent: 0 },
      responsesByStatus: { '200': 1, '201': 1, '401': 1 },
    });
    const log = (await control('GET', '/__sim/requests')).json as RequestLogEntry[];
    assert.deepEqual(
      log.map((r) => [r.seq, r.route, r.status]),
      [
        [1, 'createJob', 201],
        [2, 'getVisitors', 200],
        [3, 'getVisitors', 401],
        [4, 'control', 200],
      ],
    );
    assert.deepEqual(log[1]?.query, DAY);
    const newer = (await control('GET', '/__sim/requests?since=3')).json as RequestLogEntry[];
    assert.deepEqual(
      newer.map((r) => [r.seq, r.method, r.path]),
      [
        [4, 'GET', '/__sim/stats'],
        [5, 'GET', '/__sim/requests'],
      ],
    );
    assert.equal((await control('GET', '/__sim/requests?since=x')).status, 400);

    assert.equal((await control('POST', '/__sim/reset')).status, 204);
    assert.deepEqual(h.sim.requests(), []);
    assert.equal(h.sim.stats().jobsCreated, 0);
    assert.equal(asPage(await h.ops.visitors('p1', DAY)).visitors.length, 50);
  });

  test('unknown control route: 404; wrong method: 405', async () => {
    assert.equal((await control('GET', '/__sim/nothing')).status, 404);
    assert.equal((await control('GET', '/__sim')).status, 404);
    const wrong = await control('GET', '/__sim/reset');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.allow, 'POST');
  });

  test('only loopback clients may steer', async (t) => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
    if (!address) return t.skip('no non-loopback IPv4 interface');
    const wide = await startSimulator({ host: '0.0.0.0' });
    try {
      const port = new URL(wide.url).port;
      const response = await request(`http://${address}:${port}/__sim/stats`);
      assert.equal(response.statusCode, 403);
      await response.body.dump();
      assert.equal((await call(wide, 'GET', '/__sim/stats', { key: null })).status, 200, 'loopback');
    } finally {
      await wide.close();
    }
  });
});

describe('log bound', () => {
  test('keeps the newest maxLogEntries entries', async () => {
    const small = await startSimulator({ maxLogEntries: 5 });
    try {
      for (let i = 0; i < 23; i++) await call(small, 'GET', `/v1/analytics/p${i}/visitors?limit=1`);
      assert.deepEqual(
        small.requests().map((r) => r.seq),
        [19, 20, 21, 22, 23],
      );
      assert.equal(small.stats().requests.getVisitors, 23);
    } finally {
      await small.close();
    }
  });
});

describe('close', () => {
  test('close() with a hanging request and one in injected latency returns promptly', async () => {
    const doomed = await startSimulator();
    doomed.faults.add({ route: 'getJob', kind: 'hang' });
    doomed.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 60_000 });
    const hanging = call(doomed, 'GET', '/v2/agent/p1/job/job_x').then(
      () => 'answered',
      () => 'failed',
    );
    const slow = call(doomed, 'GET', '/v1/analytics/p1/visitors').then(
      () => 'answered',
      () => 'failed',
    );
    while (doomed.requests().length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(doomed.requests().find((r) => r.route === 'getJob')?.status, 'hang');
    const started = Date.now();
    await doomed.close();
    assert.ok(Date.now() - started < 1000, `close took ${Date.now() - started} ms`);
    assert.deepEqual(await Promise.all([hanging, slow]), ['failed', 'failed']);
    await doomed.close();
  });

  test('options are validated; the key is never part of the error', async () => {
    await assert.rejects(startSimulator({ apiKey: 'no-underscore-secret' }), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /apiKey/);
      assert.ok(!error.message.includes('no-underscore-secret'));
      return true;
    });
    await assert.rejects(startSimulator({ port: 70_000 }), /port/);
    await assert.rejects(startSimulator({ analytics: { paths: -1 } }), /analytics\.paths/);
    assert.throws(() => h.sim.configureProject('p', { visitorPaths: -5 }), /visitorPaths/);
    const custom = await startSimulator({ apiKey: 'mint_custom-secret' });
    try {
      assert.equal(custom.apiKey, 'mint_custom-secret');
      assert.equal((await call(custom, 'GET', '/v1/analytics/p/visitors')).status, 200);
      assert.match(h.sim.apiKey, /^sim_[0-9a-f]{32}$/);
      assert.match(h.sim.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await custom.close();
    }
  });
});
