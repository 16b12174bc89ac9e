import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { parseCli } from '../../../dev/simulator/cli';
import { startSimulator, type FaultRule, type Simulator } from '../../../dev/simulator';
import { api, asJob, call } from './http-client';

// The shapes of the real service's answers: error bodies, redirects, and fields of unexpected types.
let sim: Simulator;
let ops: ReturnType<typeof api>;

before(async () => {
  // The default error bodies are the service's.
  sim = await startSimulator({ jobs: { durationMs: 60_000 } });
  ops = api(sim);
});
after(() => sim.close());
afterEach(() => sim.reset());

describe("errorBodies 'service' (the default): { error: string }, analytics adding details", () => {
  test('401, 404 and 409 of the agent API carry only the message', async () => {
    const unauthorized = await call(sim, 'GET', '/v2/agent/p1/job/job_x', { key: 'sim_wrong' });
    assert.deepEqual(
      [unauthorized.status, unauthorized.json],
      [401, { error: 'missing or invalid API key' }],
    );
    const missing = await ops.getJob('p1', 'job_x');
    assert.deepEqual([missing.status, missing.json], [404, { error: 'no job job_x in project p1' }]);
    const { id } = asJob(await ops.createJob('p1'));
    sim.completeJob(id, 'failed');
    const refused = await ops.sendMessage('p1', id);
    assert.deepEqual(refused.json, { error: `job ${id} is failed and takes no more messages` });
  });

  test('a 400 of the analytics operation adds details', async () => {
    const answer = await ops.visitors('p1', { limit: 0 });
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.json, {
      error: 'invalid query parameters',
      details: [{ message: 'limit must be an integer from 1 to 250' }],
    });
  });

  test('injected statuses use the same shape', async () => {
    sim.faults.add({ route: 'createJob', kind: 'status', status: 403, times: 1 });
    const answer = await ops.createJob('p1');
    assert.deepEqual([answer.status, answer.json], [403, { error: 'injected HTTP 403' }]);
    assert.equal(sim.stats().jobsCreated, 0);
  });

  test("a project configured with 'detailed' answers { error: { code, message, field } }; others keep the default", async () => {
    sim.configureProject('older', { errorBodies: 'detailed' });
    const missing = await ops.getJob('older', 'job_x');
    assert.deepEqual(
      [missing.status, missing.json],
      [404, { error: { code: 'not_found', message: 'no job job_x in project older' } }],
    );
    const invalid = await ops.visitors('older', { limit: 0 });
    assert.deepEqual(invalid.json, {
      error: { code: 'invalid_request', message: 'limit must be an integer from 1 to 250', field: 'limit' },
    });
    const other = await ops.getJob('p1', 'job_x');
    assert.deepEqual(other.json, { error: 'no job job_x in project p1' });
    assert.throws(
      () => sim.configureProject('older', { errorBodies: 'nested' as 'detailed' }),
      /errorBodies/,
    );
  });

  test('a 2xx answer is unchanged', async () => {
    const answer = await ops.createJob('p1');
    assert.equal(answer.status, 201);
    assert.equal(asJob(answer).source.repository, 'https://github.com/sim-org/p1-docs');
  });
});

describe('redirect faults', () => {
  test('301 to the same URL over https by default: nothing processed, no body', async () => {
    sim.faults.add({ route: 'createJob', kind: 'redirect', times: 1 });
    const answer = await ops.createJob('p1');
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.location, `https://${new URL(sim.url).host}/v2/agent/p1/job`);
    assert.equal(answer.text, '');
    assert.equal(sim.stats().jobsCreated, 0);
    assert.deepEqual(
      sim.requests().map((r) => [r.status, r.processed, r.fault]),
      [[301, false, 'redirect']],
    );
    assert.equal((await ops.createJob('p1')).status, 201, 'times: 1');
  });

  test('a status and a location of their own', async () => {
    sim.faults.add({
      route: 'getVisitors',
      kind: 'redirect',
      redirect: { status: 308, location: '/elsewhere' },
    });
    const answer = await ops.visitors('p1');
    assert.deepEqual([answer.status, answer.headers.location], [308, '/elsewhere']);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['a status that is not a redirect', { redirect: { status: 200 } }, /redirect\.status/],
    ['afterProcessing (a redirect never acts)', { afterProcessing: true }, /afterProcessing: does not apply/],
    ['redirect on another kind', { kind: 'status', status: 500, redirect: {} }, /redirect: does not apply/],
  ];
  for (const [name, extra, message] of bad) {
    test(`refused: ${name}`, () => {
      const rule = { route: 'createJob', kind: 'redirect', ...extra } as unknown as FaultRule;
      assert.throws(() => sim.faults.add(rule), message);
    });
  }
});

describe('drifts of the real service', () => {
  test('odd-optional-types: model an object, createdAt a number, source a string', async () => {
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'odd-optional-types', times: 1 });
    const body = (await ops.createJob('p1')).json as Record<string, unknown>;
    assert.equal(typeof body.id, 'string');
    assert.equal(body.status, 'active');
    assert.deepEqual(body.model, { name: 'sim-agent-1', version: 2 });
    assert.equal(typeof body.createdAt, 'number');
    assert.equal(body.source, 'https://github.com/sim-org/p1-docs');
  });

  test('null-ref: source.ref null', async () => {
    sim.faults.add({ route: 'createJob', kind: 'drift', drift: 'null-ref', times: 1 });
    const body = asJob(await ops.createJob('p1'));
    assert.deepEqual(body.source, { repository: 'https://github.com/sim-org/p1-docs', ref: null });
  });

  test('odd-optional-types on a page: extra fields of any type, the listed ones intact', async () => {
    const query = { dateFrom: '2026-11-01', dateTo: '2026-11-02', limit: 5 };
    const plain = (await ops.visitors('p1', query)).json as Record<string, unknown>;
    sim.faults.add({ route: 'getVisitors', kind: 'drift', drift: 'odd-optional-types', times: 1 });
    const odd = (await ops.visitors('p1', query)).json as Record<string, unknown>;
    assert.equal(odd.hasMore, plain.hasMore);
    assert.equal(odd.sampling, 1);
    assert.deepEqual(odd.totals, { ...(plain.totals as object), sessions: 'n/a' });
    assert.deepEqual(
      (odd.visitors as { path: string; bounceRate: unknown }[]).map((r) => [r.path, r.bounceRate]),
      (plain.visitors as { path: string }[]).map((r) => [r.path, null]),
    );
  });
});

test('standalone: service error bodies by default, --error-bodies detailed, and a wrong value named', () => {
  const parsed = parseCli(['--error-bodies', 'detailed'], {});
  assert.ok(parsed.ok);
  assert.equal(parsed.config.errorBodies, 'detailed');
  const defaulted = parseCli([], {});
  assert.ok(defaulted.ok);
  assert.equal(defaulted.config.errorBodies, 'service');
  assert.deepEqual(parseCli(['--error-bodies', 'nested'], {}), {
    ok: false,
    message: '--error-bodies must be service or detailed',
  });
});
