import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startSimulator, type FaultRule } from '../../../dev/simulator';
import { api, asError, asJob, asPage, call, manualClock, type Answer } from './http-client';
import { useSimulator } from './use-simulator';

const clock = manualClock();
const DAY = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
// The older 'detailed' error bodies carry a code (`bad_gateway`, `rate_limited`...) to assert on.
const h = useSimulator({ clock: clock.now, jobs: { durationMs: 60_000 }, errorBodies: 'detailed' });

async function connectionError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  assert.fail('expected the request to fail');
}

function lastEntry() {
  const entry = h.sim.requests().at(-1);
  assert.ok(entry);
  return entry;
}

describe('latency', () => {
  test('delays, then answers normally', async () => {
    h.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 300 });
    const started = Date.now();
    const answer = await h.ops.visitors('p1', DAY);
    assert.ok(Date.now() - started >= 290);
    assert.equal(answer.status, 200);
    assert.equal(asPage(answer).visitors.length, 50);
    assert.equal(lastEntry().fault, 'latency');
  });

  test('composes with a status rule of the same route', async () => {
    h.sim.faults.add({ route: 'getJob', kind: 'latency', latencyMs: 100 });
    h.sim.faults.add({ route: 'getJob', kind: 'status', status: 502 });
    const started = Date.now();
    const answer = await h.ops.getJob('p1', 'job_x');
    assert.ok(Date.now() - started >= 90);
    assert.equal(answer.status, 502);
    assert.equal(asError(answer).code, 'bad_gateway');
    assert.equal(lastEntry().fault, 'status');
  });
});

describe('status', () => {
  test('before processing: the error, and the service did not act', async () => {
    h.sim.faults.add({ route: 'createJob', kind: 'status', status: 503, times: 1 });
    const answer = await h.ops.createJob('p1');
    assert.equal(answer.status, 503);
    assert.equal(asError(answer).code, 'service_unavailable');
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    assert.equal(h.sim.stats().jobsCreated, 0);
    const entry = lastEntry();
    assert.deepEqual([entry.status, entry.fault, entry.processed], [503, 'status', false]);
    assert.equal(entry.prompt, 'Fix the typos', 'the prompt of a faulted request is logged');
    assert.equal((await h.ops.createJob('p1')).status, 201, 'times: 1 is used up');
  });

  test('after processing: the job was created and the message recorded, yet the answer is an error', async () => {
    h.sim.faults.add({ route: 'createJob', kind: 'status', status: 500, afterProcessing: true, times: 1 });
    const failed = await h.ops.createJob('p1', { prompt: 'created anyway' });
    assert.equal(failed.status, 500);
    assert.equal(h.sim.stats().jobsCreated, 1);
    const entry = lastEntry();
    assert.equal(entry.processed, true);
    assert.ok(entry.jobId);
    assert.equal(h.sim.job(entry.jobId)?.prompt, 'created anyway');

    h.sim.faults.add({ route: 'sendMessage', kind: 'status', status: 502, afterProcessing: true, times: 1 });
    assert.equal((await h.ops.sendMessage('p1', entry.jobId, { prompt: 'recorded anyway' })).status, 502);
    assert.deepEqual(
      h.sim.job(entry.jobId)?.messages.map((m) => m.prompt),
      ['recorded anyway'],
    );
    assert.equal(h.sim.stats().messagesAccepted, 1);
  });

  test('4xx statuses and an optional Retry-After', async () => {
    for (const status of [400, 403, 408, 422]) {
      h.sim.faults.add({ route: 'getJob', kind: 'status', status, times: 1 });
      const answer = await h.ops.getJob('p1', 'job_x');
      assert.equal(answer.status, status);
      assert.ok(asError(answer).code);
    }
    h.sim.faults.add({ route: 'getJob', kind: 'status', status: 503, retryAfter: { seconds: 4 }, times: 1 });
    assert.equal((await h.ops.getJob('p1', 'job_x')).headers['retry-after'], '4');
    assert.deepEqual(h.sim.stats().responsesByStatus, { '400': 1, '403': 1, '408': 1, '422': 1, '503': 1 });
  });
});

describe('status with retryAfter', () => {
  test('500 and 503 carry the Retry-After header of the rule', async () => {
    h.sim.faults.add({
      route: 'getVisitors',
      kind: 'status',
      status: 500,
      retryAfter: { seconds: 2 },
      times: 1,
    });
    const internal = await h.ops.visitors('p1', DAY);
    assert.equal(internal.status, 500);
    assert.equal(asError(internal).code, 'internal_error');
    assert.equal(internal.headers['retry-after'], '2');
    h.sim.faults.add({
      route: 'getVisitors',
      kind: 'status',
      status: 503,
      retryAfter: { httpDateInSeconds: 9 },
      times: 1,
    });
    const unavailable = await h.ops.visitors('p1', DAY);
    assert.equal(unavailable.status, 503);
    assert.equal(
      Date.parse(String(unavailable.headers['retry-after'])) - Date.parse(String(unavailable.headers.date)),
      9000,
    );
    h.sim.faults.add({ route: 'getVisitors', kind: 'status', status: 500, times: 1 });
    assert.equal(
      (await h.ops.visitors('p1', DAY)).headers['retry-after'],
      undefined,
      'none unless asked for',
    );
    assert.equal((await h.ops.visitors('p1', DAY)).status, 200);
    assert.deepEqual(
      h.sim.requests().map((r) => [r.status, r.fault ?? null, r.processed]),
      [
        [500, 'status', false],
        [503, 'status', false],
        [500, 'status', false],
        [200, null, true],
      ],
    );
  });
});

describe('rateLimit', () => {
  test('429 with Retry-After in seconds', async () => {
    h.sim.faults.add({ route: 'createJob', kind: 'rateLimit', retryAfter: { seconds: 7 }, times: 1 });
    const answer = await h.ops.createJob('p1');
    assert.equal(answer.status, 429);
    assert.equal(asError(answer).code, 'rate_limited');
    assert.equal(answer.headers['retry-after'], '7');
    assert.equal(h.sim.stats().jobsCreated, 0);
  });

  test('429 with Retry-After as an HTTP date that far ahead of the Date header', async () => {
    h.sim.faults.add({ route: 'getVisitors', kind: 'rateLimit', retryAfter: { httpDateInSeconds: 30 } });
    const answer = await h.ops.visitors('p1');
    assert.equal(answer.status, 429);
    const retryAt = Date.parse(String(answer.headers['retry-after']));
    const serverNow = Date.parse(String(answer.headers.date));
    assert.match(String(answer.headers['retry-after']), /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    assert.equal(retryAt - serverNow, 30_000);
    assert.equal(retryAt, Math.floor(clock.now() / 1000) * 1000 + 30_000);
  });
});

describe('rateLimit against the real clock', () => {
  test('Retry-After as an HTTP date parses to a time in the future', async () => {
    const live = await startSimulator();
    try {
      live.faults.add({ route: 'createJob', kind: 'rateLimit', retryAfter: { httpDateInSeconds: 120 } });
      const before = Date.now();
      const answer = await api(live).createJob('p1');
      assert.equal(answer.status, 429);
      const header = String(answer.headers['retry-after']);
      assert.doesNotMatch(header, /^\d+$/, 'a date, not seconds');
      const retryAt = Date.parse(header);
      assert.ok(!Number.isNaN(retryAt), header);
      assert.ok(retryAt > Date.now(), `${header} is in the future`);
      assert.ok(retryAt >= before + 119_000 && retryAt <= Date.now() + 120_000, header);
      assert.equal(live.stats().jobsCreated, 0);
    } finally {
      await live.close();
    }
  });

  test('Retry-After in seconds, and the default of 1 second', async () => {
    const live = await startSimulator();
    try {
      live.faults.add({ route: 'getJob', kind: 'rateLimit', retryAfter: { seconds: 42 }, times: 1 });
      live.faults.add({ route: 'getJob', kind: 'rateLimit', times: 1 });
      const first = await api(live).getJob('p1', 'job_x');
      assert.equal(first.status, 429);
      assert.equal(Number(first.headers['retry-after']), 42);
      const second = await api(live).getJob('p1', 'job_x');
      assert.equal(second.status, 429);
      assert.equal(Number(second.headers['retry-after']), 1);
      assert.equal((await api(live).getJob('p1', 'job_x')).status, 404);
    } finally {
      await live.close();
    }
  });
});

describe('hang and reset', () => {
  test("hang: the client's own timeout fires, and close() still returns quickly", async () => {
    const doomed = await startSimulator();
    doomed.faults.add({ route: 'getVisitors', kind: 'hang' });
    const started = Date.now();
    const code = await connectionError(
      call(doomed, 'GET', '/v1/analytics/p1/visitors', { headersTimeout: 250 }),
    );
    assert.equal(code, 'UND_ERR_HEADERS_TIMEOUT');
    assert.ok(Date.now() - started >= 240, 'the client waited for its own timeout');
    // Another request still hanging when close() is called.
    const pending = call(doomed, 'GET', '/v1/analytics/p2/visitors').then(
      () => 'answered',
      () => 'failed',
    );
    while (doomed.requests().length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const closing = Date.now();
    await doomed.close();
    assert.ok(Date.now() - closing < 1000, `close took ${Date.now() - closing} ms`);
    assert.equal(await pending, 'failed');
    assert.equal(doomed.stats().responsesByStatus.hang, 2);
  });

  test('hang: no answer until the client gives up; logged as hang', async () => {
    h.sim.faults.add({ route: 'getJob', kind: 'hang', times: 1 });
    const code = await connectionError(call(h.sim, 'GET', '/v2/agent/p1/job/job_x', { headersTimeout: 200 }));
    assert.equal(code, 'UND_ERR_HEADERS_TIMEOUT');
    assert.deepEqual([lastEntry().status, lastEntry().fault], ['hang', 'hang']);
    assert.equal(h.sim.stats().responsesByStatus.hang, 1);
  });

  test('hang after processing: the message was recorded', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    h.sim.faults.add({ route: 'sendMessage', kind: 'hang', afterProcessing: true, times: 1 });
    await connectionError(
      call(h.sim, 'POST', `/v2/agent/p1/job/${job.id}/message`, {
        body: { prompt: 'lost answer' },
        headersTimeout: 200,
      }),
    );
    assert.deepEqual(
      h.sim.job(job.id)?.messages.map((m) => m.prompt),
      ['lost answer'],
    );
    assert.equal(lastEntry().processed, true);
  });

  test('reset before processing: the connection is destroyed and no job exists', async () => {
    h.sim.faults.add({ route: 'createJob', kind: 'reset', times: 1 });
    const code = await connectionError(h.ops.createJob('p1'));
    assert.match(code, /ECONNRESET|UND_ERR_SOCKET/);
    assert.equal(h.sim.stats().jobsCreated, 0);
    assert.deepEqual([lastEntry().status, lastEntry().processed], ['reset', false]);
    assert.equal(h.sim.stats().responsesByStatus.reset, 1);
    assert.equal((await h.ops.createJob('p1')).status, 201, 'the next request gets through');
  });

  test('reset after processing: the job was created', async () => {
    h.sim.faults.add({ route: 'createJob', kind: 'reset', afterProcessing: true, times: 1 });
    await connectionError(h.ops.createJob('p1'));
    assert.equal(h.sim.stats().jobsCreated, 1);
    assert.deepEqual([lastEntry().status, lastEntry().processed], ['reset', true]);
  });
});

describe('malformed answers', () => {
  test('not-json, html-200, no-content-type, truncated-json', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    const get = () => h.ops.getJob('p1', job.id);
    const add = (malformed: NonNullable<FaultRule['malformed']>) =>
      h.sim.faults.add({ route: 'getJob', kind: 'malformed', malformed, times: 1 });

    add('not-json');
    const notJson = await get();
    assert.equal(notJson.status, 200);
    assert.match(String(notJson.headers['content-type']), /^application\/json/);
    assert.equal(notJson.json, undefined);

    add('html-200');
    const html = await get();
    assert.equal(html.status, 200);
    assert.match(String(html.headers['content-type']), /^text\/html/);
    assert.match(html.text, /<html>/);

    add('no-content-type');
    const untyped = await get();
    assert.equal(untyped.headers['content-type'], undefined);
    assert.equal(asJob(untyped).id, job.id);

    add('truncated-json');
    const truncated = await get();
    assert.equal(truncated.json, undefined);
    assert.ok(JSON.stringify(asJob(await get())).startsWith(truncated.text));

    assert.deepEqual(
      h.sim
        .requests()
        .slice(1, 5)
        .map((r) => r.fault),
      ['malformed', 'malformed', 'malformed', 'malformed'],
    );
  });

  test('only 2xx answers are malformed, and a rule is not used up by an error answer', async () => {
    h.sim.faults.add({ route: 'getJob', kind: 'malformed', malformed: 'not-json', times: 1 });
    const missing = await h.ops.getJob('p1', 'job_missing');
    assert.equal(missing.status, 404);
    assert.equal(asError(missing).code, 'not_found');
    const job = asJob(await h.ops.createJob('p1'));
    assert.equal((await h.ops.getJob('p1', job.id)).json, undefined);
  });
});

describe('schema drift', () => {
  async function driftedJob(drift: NonNullable<FaultRule['drift']>): Promise<Record<string, unknown>> {
    const job = asJob(await h.ops.createJob('p1'));
    h.sim.faults.add({ route: 'getJob', kind: 'drift', drift, times: 1 });
    const answer: Answer = await h.ops.getJob('p1', job.id);
    assert.equal(answer.status, 200);
    return answer.json as Record<string, unknown>;
  }

  test('job answers', async () => {
    const unknown = await driftedJob('unknown-status');
    assert.ok(!['active', 'completed', 'archived', 'failed'].includes(String(unknown.status)));
    assert.equal('id' in (await driftedJob('missing-id')), false);
    const extra = await driftedJob('extra-fields');
    assert.ok(Object.keys(extra).length > 7);
    assert.equal(typeof (await driftedJob('wrong-types')).status, 'number');
    const omitted = await driftedJob('archivedAt-omitted');
    assert.equal('archivedAt' in omitted, false);
    assert.equal(typeof omitted.id, 'string');
    assert.equal(h.sim.requests().filter((r) => r.fault === 'drift').length, 5);
  });

  test('visitors answers; a job-only drift does not touch a page and is kept for the next job answer', async () => {
    const add = (drift: NonNullable<FaultRule['drift']>) =>
      h.sim.faults.add({ route: 'getVisitors', kind: 'drift', drift, times: 1 });
    add('extra-fields');
    const extra = asPage(await h.ops.visitors('p1', DAY));
    assert.ok(Object.keys(extra).length > 3);
    add('wrong-types');
    assert.equal(typeof (asPage(await h.ops.visitors('p1', DAY)).hasMore as unknown), 'string');
    add('missing-id');
    assert.ok(asPage(await h.ops.visitors('p1', DAY)).visitors.every((row) => !('path' in row)));

    h.sim.faults.add({ route: '*', kind: 'drift', drift: 'unknown-status', times: 1 });
    const page = await h.ops.visitors('p1', DAY);
    assert.equal(asPage(page).visitors[0]?.path.startsWith('/'), true);
    assert.equal(h.sim.requests().at(-1)?.fault, undefined);
    const job = asJob(await h.ops.createJob('p1'));
    assert.equal(job.status, 'paused_for_review', 'the create answer is a job answer too');
  });
});

describe('matching', () => {
  test('times, projectId and route filters', async () => {
    h.sim.faults.add({ route: 'getJob', projectId: 'p2', kind: 'status', status: 500, times: 2 });
    assert.equal((await h.ops.getJob('p1', 'job_x')).status, 404);
    assert.equal((await h.ops.visitors('p2')).status, 200);
    assert.equal((await h.ops.getJob('p2', 'job_x')).status, 500);
    assert.equal((await h.ops.getJob('p2', 'job_x')).status, 500);
    assert.equal((await h.ops.getJob('p2', 'job_x')).status, 404);
    assert.deepEqual(h.sim.faults.list(), []);
  });

  test('probability draws from a seeded generator: the same pattern after a reset', async () => {
    const pattern = async (): Promise<string> => {
      h.sim.faults.add({ route: '*', kind: 'status', status: 503, probability: 0.5 });
      let seen = '';
      for (let i = 0; i < 40; i++) seen += (await h.ops.getJob('p1', 'job_x')).status === 503 ? 'x' : '.';
      return seen;
    };
    const first = await pattern();
    h.sim.reset();
    const second = await pattern();
    assert.equal(first, second);
    assert.ok(first.includes('x') && first.includes('.'), first);
  });

  test('add validates (TypeError naming the field); list and remove', () => {
    assert.throws(() => h.sim.faults.add({ route: 'getJob', kind: 'status' }), /status/);
    assert.throws(
      () => h.sim.faults.add({ route: 'getJob', kind: 'latency', latencyMs: 5, status: 500 }),
      /status/,
    );
    assert.throws(
      () => h.sim.faults.add({ route: 'nope', kind: 'hang' } as unknown as FaultRule),
      (error: unknown) => error instanceof TypeError && /route/.test(error.message),
    );
    assert.throws(() => h.sim.faults.add({ route: 'getJob', kind: 'hang', probability: 2 }), /probability/);
    const a = h.sim.faults.add({ route: 'getJob', kind: 'hang' });
    const b = h.sim.faults.add({ route: '*', projectId: 'p', kind: 'reset', afterProcessing: true });
    assert.notEqual(a, b);
    assert.deepEqual(h.sim.faults.list(), [
      { route: 'getJob', kind: 'hang' },
      { route: '*', projectId: 'p', kind: 'reset', afterProcessing: true },
    ]);
    h.sim.faults.remove(a);
    assert.equal(h.sim.faults.list().length, 1);
    h.sim.faults.clear();
    assert.deepEqual(h.sim.faults.list(), []);
  });
});
