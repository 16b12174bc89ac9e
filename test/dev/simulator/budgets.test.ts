import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../../../dev/simulator';
import { api, asError, asJob, call, manualClock } from './http-client';

const DAY = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
// 12:00:00 UTC: a multiple of 10 s, so the fixed windows start on it.
const clock = manualClock(Date.UTC(2026, 10, 1, 12));
let sim: Simulator;
let ops: ReturnType<typeof api>;

before(async () => {
  sim = await startSimulator({
    clock: clock.now,
    // The older 'detailed' error bodies carry a code (`rate_limited`) and name the field at fault.
    errorBodies: 'detailed',
    budgets: { analytics: { requests: 3, windowMs: 10_000 }, agent: { requests: 2, windowMs: 10_000 } },
  });
  ops = api(sim);
});
after(() => sim.close());
afterEach(() => {
  sim.reset();
  sim.configureBudgets({
    analytics: { requests: 3, windowMs: 10_000 },
    agent: { requests: 2, windowMs: 10_000 },
  });
});

describe('analytics budget: per key, shared by every project, fixed windows', () => {
  test('the fourth request of a window is refused with Retry-After to the end of the window, whatever the project', async () => {
    assert.equal((await ops.visitors('p1', DAY)).status, 200);
    assert.equal((await ops.visitors('p2', DAY)).status, 200);
    clock.advance(2_500);
    assert.equal((await ops.visitors('p3', DAY)).status, 200);
    const refused = await ops.visitors('p4', DAY);
    assert.equal(refused.status, 429);
    assert.equal(asError(refused).code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '8', 'ceil((10 000 - 2 500) / 1000)');
    assert.equal(
      (await ops.visitors('p1', DAY)).status,
      429,
      'a refused request does not count, nor free one',
    );

    clock.advance(7_500);
    assert.equal((await ops.visitors('p1', DAY)).status, 200, 'a new window starts at 12:00:10');
    assert.deepEqual(sim.stats().budgetRefusals, { analytics: 2, agent: 0 });
    assert.deepEqual(
      sim.requests().map((r) => [r.projectId, r.status, r.processed]),
      [
        ['p1', 200, true],
        ['p2', 200, true],
        ['p3', 200, true],
        ['p4', 429, false],
        ['p1', 429, false],
        ['p1', 200, true],
      ],
    );
  });

  test('without Retry-After: the refusal carries no header', async () => {
    sim.configureBudgets({ analytics: { requests: 1, windowMs: 10_000, retryAfter: false } });
    assert.equal((await ops.visitors('p1', DAY)).status, 200);
    const refused = await ops.visitors('p1', DAY);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], undefined);
  });

  test('a foreign spender uses the budget up: the next request is refused', async () => {
    assert.equal(sim.spendBudget('analytics', 10), 3, 'only what is left in the window');
    assert.equal((await ops.visitors('p1', DAY)).status, 429);
    assert.equal(sim.spendBudget('analytics', 1), 0);
  });
});

describe('agent budget: create and message together, per project', () => {
  test('a create and a message use up p1; p2 keeps its own budget; the next window admits again', async () => {
    const created = await ops.createJob('p1');
    assert.equal(created.status, 201);
    assert.equal((await ops.sendMessage('p1', asJob(created).id)).status, 200);
    const refused = await ops.createJob('p1');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '10');
    assert.equal((await ops.sendMessage('p1', asJob(created).id)).status, 429);
    assert.equal((await ops.createJob('p2')).status, 201);
    clock.advance(10_000);
    assert.equal((await ops.createJob('p1')).status, 201);
    assert.deepEqual(sim.stats().budgetRefusals, { analytics: 0, agent: 2 });
    assert.deepEqual(sim.stats().jobsCreatedByProject, { p1: 2, p2: 1 });
    assert.equal(sim.stats().messagesAccepted, 1);
  });

  test('null turns a budget off', async () => {
    sim.configureBudgets({ agent: null });
    for (let i = 0; i < 5; i++) assert.equal((await ops.createJob('p1')).status, 201);
  });
});

describe('control routes', () => {
  const control = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    call(sim, method, path, body === undefined ? {} : { body });

  test('GET and POST /__sim/budgets, spend, and bad bodies naming the field', async () => {
    const set = await control('POST', '/__sim/budgets', {
      analytics: { requests: 20, windowMs: 10_000, retryAfter: false },
      agent: null,
    });
    assert.equal(set.status, 200);
    assert.deepEqual(set.json, { analytics: { requests: 20, windowMs: 10_000, retryAfter: false } });
    assert.deepEqual((await control('GET', '/__sim/budgets')).json, set.json);

    const spent = await control('POST', '/__sim/budgets/analytics/spend', { requests: 19 });
    assert.deepEqual(spent.json, { spent: 19 });
    assert.equal((await ops.visitors('p1', DAY)).status, 200);
    assert.equal((await ops.visitors('p1', DAY)).status, 429);

    const bad = await control('POST', '/__sim/budgets', { analytics: { requests: -1, windowMs: 10 } });
    assert.equal(bad.status, 400);
    assert.equal(asError(bad).field, 'analytics.requests');
    const noProject = await control('POST', '/__sim/budgets/agent/spend', { requests: 1 });
    assert.equal(noProject.status, 400);
    assert.equal(asError(noProject).field, 'projectId');
    assert.equal((await control('POST', '/__sim/budgets/other/spend', { requests: 1 })).status, 404);
  });

  test('the in-process API validates too', () => {
    assert.throws(
      () => sim.configureBudgets({ agent: { requests: 1, windowMs: 0 } }),
      /invalid budgets: agent\.windowMs/,
    );
  });
});
