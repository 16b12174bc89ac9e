import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocsApiClient } from '../../src/docs-api/client';
import { failureView } from './failure-view';
import { startSimulator, type Simulator } from '../../dev/simulator';

// The client against a simulator answering in the real service's shapes: `{ "error": "<message>" }` bodies,
// fields of unexpected types, 403 and 3xx.
let sim: Simulator;
let detailed: Simulator;
let client: DocsApiClient;
let detailedClient: DocsApiClient;

before(async () => {
  [sim, detailed] = await Promise.all([
    startSimulator({ jobs: { durationMs: 60_000 }, errorBodies: 'service' }),
    startSimulator({ jobs: { durationMs: 60_000 }, errorBodies: 'detailed' }),
  ]);
  client = new DocsApiClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  detailedClient = new DocsApiClient({ baseUrl: detailed.url, apiKey: detailed.apiKey });
});
after(async () => {
  await Promise.all([client.close(), detailedClient.close()]);
  await Promise.all([sim.close(), detailed.close()]);
});
afterEach(() => {
  sim.reset();
  detailed.reset();
});

async function rejection(promise: Promise<unknown>, type: string) {
  const error = await promise.then(
    () => assert.fail(`expected ${type}`),
    (e: unknown) => e,
  );
  const failure = failureView(error, type as Parameters<typeof failureView>[1]);
  assert.ok(!failure.message.includes(sim.apiKey.split('_')[1] ?? sim.apiKey), 'the key leaked');
  return failure;
}

describe('job answers: only id, status and prLink are parsed strictly', () => {
  test('odd optional fields on create: the job and its id are kept, each odd field dropped with a warning', async () => {
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'odd-optional-types', times: 1 });
    const warnings: string[] = [];
    const job = await client.createJob('p', { prompt: 'x' }, { onWarning: (w) => warnings.push(w) });
    const created = sim.requests().find((r) => r.route === 'createJob');
    assert.equal(job.id, created?.jobId);
    assert.equal(job.status, 'active');
    assert.equal(job.prLink, null);
    assert.deepEqual(Object.keys(job).sort(), ['archivedAt', 'id', 'prLink', 'status']);
    assert.deepEqual(warnings, [
      'response field model: unexpected type object, dropped',
      'response field source: unexpected type string, dropped',
      'response field createdAt: unexpected type number, dropped',
    ]);
  });

  test('the same on get-job and message', async () => {
    const { id } = await client.createJob('p', { prompt: 'x' });
    for (const [route, call] of [
      ['getJob', () => client.getJob('p', id)],
      ['sendMessage', () => client.sendMessage('p', id, { prompt: 'more' })],
    ] as const) {
      sim.faults.add({ route, kind: 'drift', drift: 'odd-optional-types', times: 1 });
      const job = await call();
      assert.equal(job.id, id);
      assert.equal(job.model, undefined);
      assert.equal((await client.getJob('p', id)).model, 'sim-agent-1');
    }
    assert.equal(sim.stats().messagesAccepted, 1);
  });

  test('source.repository is a URL and source.ref may be null', async () => {
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'null-ref', times: 1 });
    const job = await client.createJob('p', { prompt: 'x' });
    assert.deepEqual(job.source, { repository: 'https://github.com/sim-org/p-docs', ref: null });
  });

  test('an odd status fails the answer, naming the job it carried (never lost)', async () => {
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'wrong-types', times: 1 });
    const error = await rejection(client.createJob('p', { prompt: 'x' }), 'MalformedResponseError');
    const created = sim.requests().find((r) => r.route === 'createJob');
    assert.equal(error.field, 'status');
    assert.equal(error.jobId, created?.jobId);
    assert.match(error.message, new RegExp(`names job ${created?.jobId ?? '?'}`));
  });

  test('a create answers 201', async () => {
    await client.createJob('p', { prompt: 'x' });
    assert.deepEqual(
      sim.requests().map((r) => r.status),
      [201],
    );
  });
});

describe('visitors pages', () => {
  test('a page with odd extra fields still counts', async () => {
    const query = { dateFrom: '2026-11-01', dateTo: '2026-11-02', limit: 10 };
    const plain = await client.getVisitors('p', query);
    sim.faults.add({ route: 'getVisitors', kind: 'drift', drift: 'odd-optional-types', times: 1 });
    assert.deepEqual(await client.getVisitors('p', query), plain);
  });
});

describe('error bodies: the service shape and the detailed one', () => {
  test('analytics 400 with details: the message and its details', async () => {
    // The client refuses this date before sending: a raw request shows the service shape.
    const response = await fetch(`${sim.url}/v1/analytics/p/visitors?dateFrom=2026-02-30`, {
      headers: { authorization: `Bearer ${sim.apiKey}` },
    });
    const body: unknown = await response.json();
    assert.equal(response.status, 400);
    assert.deepEqual(Object.keys(body as object).sort(), ['details', 'error']);
    sim.faults.add({ route: 'getVisitors', kind: 'status', status: 400, times: 1 });
    const error = await rejection(client.getVisitors('p', { limit: 1 }), 'InvalidRequestError');
    assert.match(
      error.message,
      /invalid request: invalid query parameters \(injected HTTP 400\) \| HTTP 400/,
    );
  });

  for (const [name, which] of [
    ['service', () => ({ c: client, s: sim })],
    ['detailed', () => ({ c: detailedClient, s: detailed })],
  ] as const) {
    test(`${name}: a 404 carries the service's message`, async () => {
      const { c } = which();
      const error = await rejection(c.getJob('p', 'job_missing'), 'NotFoundError');
      assert.match(error.message, /^getJob: not found: no job job_missing in project p \| HTTP 404/);
    });
  }
});

describe('403 and 3xx', () => {
  test('403: a read-only or IP-restricted key, said so', async () => {
    sim.faults.add({ route: 'createJob', kind: 'status', status: 403, times: 1 });
    const error = await rejection(client.createJob('p', { prompt: 'x' }), 'AuthError');
    assert.match(error.message, /forbidden: .*read-only key, or one restricted to other IP addresses/);
    assert.equal(error.retryable, false);
    assert.equal(sim.stats().jobsCreated, 0);
  });

  test('3xx: not followed, not processed, naming the location and DOCS_API_BASE_URL', async () => {
    sim.faults.add({ route: 'createJob', kind: 'redirect', times: 1 });
    const error = await rejection(client.createJob('p', { prompt: 'x' }), 'RedirectError');
    const expected = `https://${new URL(sim.url).host}/v2/agent/p/job`;
    assert.ok(error.message.includes(`redirected to ${expected},`), error.message);
    assert.equal(error.status, 301);
    assert.equal(error.safeToRetry, true, 'the service did not act');
    assert.equal(error.retryable, false, 'the same URL redirects again');
    assert.ok(error.message.includes(`redirected to ${expected}, not followed`), error.message);
    assert.match(error.message, /set DOCS_API_BASE_URL/);
    assert.equal(sim.stats().jobsCreated, 0);
    assert.deepEqual(
      sim.requests().map((r) => [r.status, r.processed]),
      [[301, false]],
    );
  });

  test('a 307 to an explicit location on get-job', async () => {
    sim.faults.add({
      route: 'getJob',
      kind: 'redirect',
      redirect: { status: 307, location: 'https://docs.example.com/api/v2/agent/p/job/j1' },
      times: 1,
    });
    const error = await rejection(client.getJob('p', 'j1'), 'RedirectError');
    assert.match(error.message, /redirected to https:\/\/docs\.example\.com\/api\/v2\/agent\/p\/job\/j1,/);
    assert.equal(error.status, 307);
  });
});

describe('dates: the client and the simulator follow one rule', () => {
  const accepted = [
    '2026-11-01',
    '2026-11-01T00:00:00Z',
    '2026-11-01T00:00:00.250Z',
    '2026-11-01T01:00:00+01:00',
    '2026-11-01T00:00:00',
    '2024-02-29T12:00:00-05:30',
  ];
  const refused = [
    '2024-02-30',
    '2024-02-30T00:00:00Z',
    '2026-11-01T00:00:00+0100',
    '2026-11-01T00:00Z',
    '2026-11-01T24:00:00Z',
    '2026-11-01T00:00:00+24:00',
    '2026-11-01 00:00:00Z',
    'yesterday',
  ];
  const dateTo = '2026-12-01';

  for (const dateFrom of accepted) {
    test(`${dateFrom}: the client sends it and the simulator answers 200`, async () => {
      await client.getVisitors('p', { dateFrom, dateTo, limit: 1 });
      assert.equal(sim.requests()[0]?.status, 200);
    });
  }
  for (const dateFrom of refused) {
    test(`${dateFrom}: the client refuses it before sending, and the simulator answers 400`, async () => {
      const error = await rejection(client.getVisitors('p', { dateFrom, dateTo }), 'InvalidArgumentError');
      assert.equal(error.field, 'dateFrom');
      assert.match(error.message, /must be YYYY-MM-DD or an ISO 8601 date-time YYYY-MM-DDTHH:MM:SS/);
      assert.equal(sim.requests().length, 0);
      const raw = await fetch(
        `${sim.url}/v1/analytics/p/visitors?${new URLSearchParams({ dateFrom, dateTo }).toString()}`,
        { headers: { authorization: `Bearer ${sim.apiKey}` } },
      );
      assert.equal(raw.status, 400);
      const body = (await raw.json()) as { details: { message: string }[] };
      assert.match(body.details[0]?.message ?? '', /dateFrom must be YYYY-MM-DD/);
    });
  }
});
