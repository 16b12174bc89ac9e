import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocsApiClient } from '../../src/docs-api/client';
import { failureView } from './failure-view';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { freePort } from '../../dev/ports';

let sim: Simulator;
let client: DocsApiClient;

before(async () => {
  sim = await startSimulator({ jobs: { durationMs: 60_000 }, analytics: { paths: 120 } });
  client = new DocsApiClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    timeouts: { connectMs: 1000, headersMs: 1500, bodyMs: 1500 },
  });
});
after(async () => {
  await client.close();
  await sim.close();
});
afterEach(() => sim.reset());

/** Asserts the promise rejects with the given failure type, and that nothing in the failure reveals the key. */
async function rejectsWith(promise: Promise<unknown>, type: string) {
  try {
    await promise;
  } catch (error) {
    assertNoKey(error);
    return failureView(error, type as Parameters<typeof failureView>[1]);
  }
  assert.fail(`expected ${type}, but the call succeeded`);
}

function assertNoKey(value: unknown): void {
  const secret = sim.apiKey.slice(sim.apiKey.indexOf('_') + 1);
  const printed = [
    inspect(value, { depth: 10, showHidden: true }),
    JSON.stringify(value, Object.getOwnPropertyNames(value)),
    String(value),
  ];
  for (const text of printed) assert.ok(!text.includes(secret), `the key leaked: ${text.slice(0, 300)}`);
}

describe('agent job operations', () => {
  test('create, get and message a job', async () => {
    const created = await client.createJob('proj-1', { prompt: 'Fix the typos' });
    assert.equal(created.status, 'active');
    assert.equal(created.prLink, null);
    assert.ok(created.id);
    const read = await client.getJob('proj-1', created.id);
    assert.equal(read.id, created.id);
    const messaged = await client.sendMessage('proj-1', created.id, { prompt: 'Also the FAQ' });
    assert.equal(messaged.status, 'active');
    assert.deepEqual(
      sim.job(created.id)?.messages.map((m) => m.prompt),
      ['Also the FAQ'],
    );
    const log = sim.requests().filter((r) => r.route !== 'control');
    assert.deepEqual(
      log.map((r) => `${r.method} ${r.path}`),
      [
        'POST /v2/agent/proj-1/job',
        `GET /v2/agent/proj-1/job/${created.id}`,
        `POST /v2/agent/proj-1/job/${created.id}/message`,
      ],
    );
  });

  test('a completed job carries its PR link', async () => {
    const created = await client.createJob('proj-1', { prompt: 'Document the API' });
    sim.completeJob(created.id, 'completed');
    const done = await client.getJob('proj-1', created.id);
    assert.equal(done.status, 'completed');
    assert.match(done.prLink ?? '', /^https:\/\/.+\/pull\/\d+$/);
  });

  test('path parameters are encoded', async () => {
    await rejectsWith(client.getJob('proj-1', 'job?x=1#y'), 'NotFoundError');
    assert.equal(sim.requests().at(-1)?.path, '/v2/agent/proj-1/job/job%3Fx%3D1%23y');
  });

  test('404 for an unknown job, 409 for a message to a failed job', async () => {
    const notFound = await rejectsWith(client.getJob('proj-1', 'job_missing'), 'NotFoundError');
    assert.equal(notFound.status, 404);
    assert.match(notFound.requestId ?? '', /^req_/);
    const created = await client.createJob('proj-1', { prompt: 'Will fail' });
    sim.completeJob(created.id, 'failed');
    const conflict = await rejectsWith(
      client.sendMessage('proj-1', created.id, { prompt: 'More' }),
      'ConflictError',
    );
    assert.equal(conflict.status, 409);
    assert.equal(conflict.safeToRetry, true);
  });
});

describe('visitors', () => {
  test('pages through the data set with hasMore', async () => {
    const range = { dateFrom: '2026-11-01', dateTo: '2026-11-08' };
    const first = await client.getVisitors('proj-1', { ...range, limit: 100, offset: 0 });
    const second = await client.getVisitors('proj-1', { ...range, limit: 100, offset: 100 });
    assert.equal(first.visitors.length, 100);
    assert.equal(first.hasMore, true);
    assert.equal(second.visitors.length, 20);
    assert.equal(second.hasMore, false);
    assert.deepEqual(first.totals, second.totals);
    assert.equal(sim.requests().at(-1)?.query.offset, '100');
  });
});

describe('argument validation: a clear error naming the field, and nothing sent', () => {
  const cases: [string, () => Promise<unknown>, string][] = [
    ['empty projectId', () => client.createJob('', { prompt: 'x' }), 'projectId'],
    ['projectId with /', () => client.getJob('a/b', 'job_1'), 'projectId'],
    ['projectId with ..', () => client.getJob('a..b', 'job_1'), 'projectId'],
    ['projectId with spaces', () => client.getJob('a b', 'job_1'), 'projectId'],
    ['empty jobId', () => client.getJob('p', ''), 'jobId'],
    ['jobId with /', () => client.sendMessage('p', 'a/b', { prompt: 'x' }), 'jobId'],
    ['empty prompt', () => client.createJob('p', { prompt: '' }), 'prompt'],
    ['blank prompt', () => client.sendMessage('p', 'job_1', { prompt: '   ' }), 'prompt'],
    ['huge prompt', () => client.createJob('p', { prompt: 'x'.repeat(40_000) }), 'prompt'],
    ['limit 0', () => client.getVisitors('p', { limit: 0 }), 'limit'],
    ['limit 251', () => client.getVisitors('p', { limit: 251 }), 'limit'],
    ['fractional limit', () => client.getVisitors('p', { limit: 1.5 }), 'limit'],
    ['negative offset', () => client.getVisitors('p', { offset: -1 }), 'offset'],
    ['invalid dateFrom', () => client.getVisitors('p', { dateFrom: '2026-13-01' }), 'dateFrom'],
    [
      'inverted dates',
      () => client.getVisitors('p', { dateFrom: '2026-11-02', dateTo: '2026-11-01' }),
      'dateTo',
    ],
    [
      'equal dates',
      () => client.getVisitors('p', { dateFrom: '2026-11-02', dateTo: '2026-11-02' }),
      'dateTo',
    ],
  ];
  for (const [name, call, field] of cases) {
    test(name, async () => {
      const error = await rejectsWith(call(), 'InvalidArgumentError');
      assert.equal(error.field, field);
      assert.match(error.message, new RegExp(`invalid argument ${field}: `));
      assert.equal(sim.requests().length, 0, 'no request may reach the service');
    });
  }
});

describe('error classes', () => {
  test('401 with a wrong key: AuthError, neither key in the error', async () => {
    const wrong = new DocsApiClient({ baseUrl: sim.url, apiKey: 'mint_wrongsecretvalue' });
    const error = await rejectsWith(wrong.getJob('p', 'job_1'), 'AuthError');
    assert.equal(error.status, 401);
    assert.ok(!inspect(error).includes('wrongsecretvalue'));
    await wrong.close();
  });

  test('400 and 403 from the service', async () => {
    sim.faults.add({ route: 'getJob', kind: 'status', status: 400, times: 1 });
    sim.faults.add({ route: 'getJob', kind: 'status', status: 403, times: 1 });
    await rejectsWith(client.getJob('p', 'job_1'), 'InvalidRequestError');
    await rejectsWith(client.getJob('p', 'job_1'), 'AuthError');
  });

  test('429 with Retry-After in seconds and as an HTTP date', async () => {
    sim.faults.add({ route: 'createJob', kind: 'rateLimit', retryAfter: { seconds: 7 }, times: 1 });
    const seconds = await rejectsWith(client.createJob('p', { prompt: 'x' }), 'RateLimitedError');
    assert.equal(seconds.retryAfterMs, 7000);
    assert.equal(seconds.safeToRetry, true);
    sim.faults.add({
      route: 'createJob',
      kind: 'rateLimit',
      retryAfter: { httpDateInSeconds: 30 },
      times: 1,
    });
    const date = await rejectsWith(client.createJob('p', { prompt: 'x' }), 'RateLimitedError');
    assert.ok(date.retryAfterMs !== undefined && date.retryAfterMs > 25_000 && date.retryAfterMs <= 30_000);
  });

  test('a Retry-After longer than the maximum (default: an hour) is clamped, with a warning', async () => {
    sim.faults.add({ route: 'createJob', kind: 'rateLimit', retryAfter: { seconds: 86_400 * 30 }, times: 1 });
    const warnings: string[] = [];
    const day = await rejectsWith(
      client.createJob('p', { prompt: 'x' }, { onWarning: (w) => warnings.push(w) }),
      'RateLimitedError',
    );
    assert.equal(day.retryAfterMs, 3_600_000);
    assert.deepEqual(warnings, ['Retry-After asked for 2592000s, clamped to 3600s']);
    assert.match(day.message, /rate limited: .*\(Retry-After asked for 2592000s, clamped to 3600s\)/);

    sim.faults.add({
      route: 'getVisitors',
      kind: 'status',
      status: 503,
      retryAfter: { httpDateInSeconds: 7200 },
      times: 1,
    });
    const server = await rejectsWith(client.getVisitors('p', {}), 'ServerError');
    assert.equal(server.retryAfterMs, 3_600_000);
    assert.match(server.message, /clamped to 3600s/);
    sim.faults.add({ route: 'getVisitors', kind: 'rateLimit', retryAfter: { seconds: 7 }, times: 1 });
    const within = await rejectsWith(client.getVisitors('p', {}), 'RateLimitedError');
    assert.equal(within.retryAfterMs, 7000, 'a wait within the maximum is kept');
    assert.doesNotMatch(within.message, /clamped/);
  });

  test("the service's budget of creates answers 429", async () => {
    const limited = await startSimulator({ budgets: { agent: { requests: 2, windowMs: 3_600_000 } } });
    const c = new DocsApiClient({ baseUrl: limited.url, apiKey: limited.apiKey });
    await c.createJob('p', { prompt: 'one' });
    await c.createJob('p', { prompt: 'two' });
    const error = await rejectsWith(c.createJob('p', { prompt: 'three' }), 'RateLimitedError');
    assert.ok((error.retryAfterMs ?? 0) > 0);
    await c.close();
    await limited.close();
  });

  test('500 may have been processed, 503 was not', async () => {
    sim.faults.add({ route: 'createJob', kind: 'status', status: 500, times: 1 });
    sim.faults.add({ route: 'createJob', kind: 'status', status: 503, times: 1 });
    assert.equal(
      (await rejectsWith(client.createJob('p', { prompt: 'x' }), 'ServerError')).safeToRetry,
      false,
    );
    assert.equal(
      (await rejectsWith(client.createJob('p', { prompt: 'x' }), 'ServerError')).safeToRetry,
      true,
    );
  });

  test('408 is a timeout the service reports', async () => {
    sim.faults.add({ route: 'getJob', kind: 'status', status: 408, times: 1 });
    const error = await rejectsWith(client.getJob('p', 'job_1'), 'TimeoutError');
    assert.equal(error.status, 408);
  });

  test('a reset connection leaves the outcome unknown', async () => {
    sim.faults.add({ route: 'createJob', kind: 'reset', afterProcessing: true, times: 1 });
    const error = await rejectsWith(client.createJob('p', { prompt: 'x' }), 'NetworkError');
    assert.equal(error.safeToRetry, false);
    assert.equal(sim.stats().jobsCreated, 1, 'the service did act before the reset');
  });

  test('a refused connection is safe to retry', async () => {
    const port = await freePort();
    const refused = new DocsApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: sim.apiKey });
    const error = await rejectsWith(refused.createJob('p', { prompt: 'x' }), 'NetworkError');
    assert.match(error.message, /ECONNREFUSED/);
    assert.equal(error.safeToRetry, true);
    await refused.close();
  });

  test('a hanging service times out, outcome unknown', async () => {
    sim.faults.add({ route: 'createJob', kind: 'hang', times: 1 });
    const error = await rejectsWith(client.createJob('p', { prompt: 'x' }), 'TimeoutError');
    assert.equal(error.safeToRetry, false);
  });

  test('the caller can abort a request', async () => {
    sim.faults.add({ route: 'getJob', kind: 'hang', times: 1 });
    const controller = new AbortController();
    const pending = client.getJob('p', 'job_1', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by caller')), 100);
    await assert.rejects(pending, /cancelled by caller/);
  });
});

describe('malformed responses and schema drift', () => {
  const malformed = [
    ['not-json', 'body'],
    ['html-200', 'content-type'],
    ['truncated-json', 'body'],
  ] as const;
  for (const [kind, field] of malformed) {
    test(`${kind}: MalformedResponseError naming ${field}, with an excerpt`, async () => {
      const created = await client.createJob('p', { prompt: 'x' });
      sim.faults.add({ route: 'getJob', kind: 'malformed', malformed: kind, times: 1 });
      const error = await rejectsWith(client.getJob('p', created.id), 'MalformedResponseError');
      assert.equal(error.field, field);
      assert.ok(/\| body: .{1,200}$/.test(error.message), error.message);
    });
  }

  test('a JSON answer without a content type is read, with a warning: a created job is kept', async () => {
    sim.faults.add({ route: 'createJob', kind: 'malformed', malformed: 'no-content-type', times: 1 });
    const warnings: string[] = [];
    const created = await client.createJob('p', { prompt: 'x' }, { onWarning: (w) => warnings.push(w) });
    assert.equal(created.id, sim.requests().find((r) => r.route === 'createJob')?.jobId);
    assert.equal(sim.job(created.id)?.projectId, 'p');
    assert.deepEqual(warnings, ['response content-type "none": the body was read as JSON']);
  });

  test('a numeric job id is kept as text, in an answer and in a malformed one', async () => {
    const answers = [
      { contentType: 'text/plain', body: '{"id": 4711, "status": "active", "prLink": null}' },
      { contentType: 'application/json', body: '{"id": 4712, "status": 42}' },
    ];
    const server = http.createServer((_request, response) => {
      const answer = answers.shift();
      response.writeHead(201, { 'content-type': answer?.contentType ?? 'application/json' });
      response.end(answer?.body ?? '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const odd = new DocsApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: sim.apiKey });
    try {
      const warnings: string[] = [];
      const job = await odd.createJob('p', { prompt: 'x' }, { onWarning: (w) => warnings.push(w) });
      assert.equal(job.id, '4711');
      assert.equal(job.status, 'active');
      assert.deepEqual(warnings.sort(), [
        'response content-type "text/plain": the body was read as JSON',
        'response field id: a number (4711), kept as text',
      ]);
      const malformed = await rejectsWith(odd.createJob('p', { prompt: 'x' }), 'MalformedResponseError');
      assert.equal(malformed.field, 'status');
      assert.equal(malformed.jobId, '4712', 'the answer names a job that exists');
      assert.match(malformed.message, /the answer names job 4712/);
    } finally {
      await odd.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('an unknown status is surfaced, not a crash', async () => {
    const created = await client.createJob('p', { prompt: 'x' });
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'unknown-status', times: 1 });
    const job = await client.getJob('p', created.id);
    assert.ok(!['active', 'completed', 'archived', 'failed'].includes(job.status));
  });

  test('extra fields are ignored and archivedAt may be omitted', async () => {
    const created = await client.createJob('p', { prompt: 'x' });
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'extra-fields', times: 1 });
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'archivedAt-omitted', times: 1 });
    const withExtras = await client.getJob('p', created.id);
    assert.deepEqual(
      Object.keys(withExtras).sort(),
      ['createdAt', 'id', 'model', 'prLink', 'source', 'status']
        .concat(withExtras.archivedAt === undefined ? [] : ['archivedAt'])
        .sort(),
    );
    const omitted = await client.getJob('p', created.id);
    assert.equal(omitted.archivedAt, undefined);
  });

  test('a missing id or a wrong type names the field', async () => {
    const created = await client.createJob('p', { prompt: 'x' });
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'missing-id', times: 1 });
    assert.equal((await rejectsWith(client.getJob('p', created.id), 'MalformedResponseError')).field, 'id');
    sim.faults.add({ route: 'getJob', kind: 'drift', drift: 'wrong-types', times: 1 });
    const wrongType = await rejectsWith(client.getJob('p', created.id), 'MalformedResponseError');
    assert.ok(wrongType.field && wrongType.field !== '(root)');
  });
});
