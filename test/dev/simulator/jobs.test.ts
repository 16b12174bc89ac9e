import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startSimulator, type Simulator } from '../../../dev/simulator';
import { api, asError, asJob, call, manualClock } from './http-client';
import { useSimulator } from './use-simulator';

const clock = manualClock();
// The older 'detailed' error bodies carry a code (`not_found`, `conflict`...) and name the field at fault.
const h = useSimulator({ clock: clock.now, jobs: { durationMs: 1000 }, errorBodies: 'detailed' });

describe('authentication', () => {
  test('no key, a wrong key or another scheme: 401, and the presented key is never echoed', async () => {
    const wrong = 'mint_wrongsecretvalue123';
    const answers = [
      await call(h.sim, 'POST', '/v2/agent/p1/job', { body: { prompt: 'x' }, key: null }),
      await call(h.sim, 'GET', '/v2/agent/p1/job/job_1', { key: wrong }),
      await call(h.sim, 'GET', '/v1/analytics/p1/visitors', { key: `${h.sim.apiKey}x` }),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 401);
      assert.equal(asError(answer).code, 'unauthorized');
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      assert.ok(!answer.text.includes('wrongsecretvalue123'));
      assert.ok(!answer.text.includes(h.sim.apiKey));
    }
    const log = JSON.stringify(h.sim.requests());
    assert.ok(!log.includes('wrongsecretvalue123') && !log.includes(h.sim.apiKey.slice(4)));
    assert.deepEqual(
      h.sim.requests().map((r) => [r.route, r.status, r.authOk, r.processed]),
      [
        ['createJob', 401, false, false],
        ['getJob', 401, false, false],
        ['getVisitors', 401, false, false],
      ],
    );
    assert.equal(h.sim.stats().jobsCreated, 0);
    assert.equal(h.sim.stats().responsesByStatus['401'], 3);
  });

  test('the Bearer scheme is case-insensitive', async () => {
    const answer = await call(h.sim, 'GET', '/v1/analytics/p1/visitors', { key: null });
    assert.equal(answer.status, 401);
    const ok = await request(`${h.sim.url}/v1/analytics/p1/visitors?limit=1`, {
      headers: { authorization: `bearer ${h.sim.apiKey}` },
    });
    await ok.body.dump();
    assert.equal(ok.statusCode, 200);
  });
});

describe('routing and headers', () => {
  test('every answer has a monotonic x-request-id and JSON bodies are typed', async () => {
    const ids: number[] = [];
    for (const path of ['/v1/analytics/p1/visitors', '/nope', '/v2/agent/p1/job/unknown']) {
      const answer = await call(h.sim, 'GET', path);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      ids.push(Number(/^req_(\d+)$/.exec(String(answer.headers['x-request-id']))?.[1]));
    }
    assert.ok(
      ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > (ids[i - 1] ?? 0))),
      String(ids),
    );
    assert.deepEqual(
      h.sim.requests().map((r) => r.requestId),
      ids.map((id) => `req_${id}`),
    );
  });

  test('unknown route: 404 JSON; wrong method: 405 with Allow', async () => {
    const unknown = await call(h.sim, 'GET', '/v3/agent/p1/job');
    assert.equal(unknown.status, 404);
    assert.equal(asError(unknown).code, 'not_found');
    const trailing = await call(h.sim, 'POST', '/v2/agent/p1/job/', { body: { prompt: 'x' } });
    assert.equal(trailing.status, 404);
    const wrongMethod = await call(h.sim, 'DELETE', '/v2/agent/p1/job');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.allow, 'POST');
    const getOnCreate = await call(h.sim, 'PUT', '/v1/analytics/p1/visitors');
    assert.equal(getOnCreate.status, 405);
    assert.equal(getOnCreate.headers.allow, 'GET');
    assert.deepEqual(
      h.sim.requests().map((r) => r.route),
      ['unknown', 'unknown', 'unknown', 'unknown'],
    );
    assert.deepEqual(h.sim.stats().requests, { createJob: 0, getJob: 0, sendMessage: 0, getVisitors: 0 });
  });
});

describe('happy path', () => {
  test('create 201, get 200, message 200: the job object, and an x-request-id on every answer', async () => {
    const created = await h.ops.createJob('p1', { prompt: 'Document the webhooks' });
    assert.equal(created.status, 201);
    const job = asJob(created);
    assert.equal(job.status, 'active');
    const read = await h.ops.getJob('p1', job.id);
    assert.equal(read.status, 200);
    assert.deepEqual(asJob(read), job);
    const followed = await h.ops.sendMessage('p1', job.id, { prompt: 'Add an example' });
    assert.equal(followed.status, 200);
    assert.equal(asJob(followed).id, job.id);
    assert.equal(asJob(followed).status, 'active');
    const refused = await h.ops.getJob('p1', 'job_missing');
    const unauthorized = await call(h.sim, 'GET', `/v2/agent/p1/job/${job.id}`, { key: null });
    const answers = [created, read, followed, refused, unauthorized];
    const ids = answers.map((a) => String(a.headers['x-request-id']));
    for (const id of ids) assert.match(id, /^req_\d+$/);
    assert.equal(new Set(ids).size, answers.length, 'request ids are unique');
    assert.deepEqual(
      h.sim.requests().map((r) => [r.requestId, r.route, r.status]),
      [
        [ids[0], 'createJob', 201],
        [ids[1], 'getJob', 200],
        [ids[2], 'sendMessage', 200],
        [ids[3], 'getJob', 404],
        [ids[4], 'getJob', 401],
      ],
    );
    assert.deepEqual(
      h.sim.job(job.id)?.messages.map((m) => m.prompt),
      ['Add an example'],
    );
    assert.equal(h.sim.stats().messagesAccepted, 1);
    assert.deepEqual(h.sim.stats().requests, { createJob: 1, getJob: 3, sendMessage: 1, getVisitors: 0 });
  });
});

describe('state transitions in real time (durationMs 50)', () => {
  let live: Simulator;
  let liveOps: ReturnType<typeof api>;
  before(async () => {
    live = await startSimulator({ jobs: { durationMs: 50 }, errorBodies: 'detailed' });
    liveOps = api(live);
  });
  after(() => live.close());
  afterEach(() => live.reset());

  /** Polls the job until it leaves `from` (2 s at most). */
  async function settle(projectId: string, jobId: string, from = 'active') {
    const deadline = Date.now() + 2000;
    for (;;) {
      const answer = await liveOps.getJob(projectId, jobId);
      assert.equal(answer.status, 200);
      const job = asJob(answer);
      if (job.status !== from || Date.now() > deadline) return job;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  test('completed with a PR link', async () => {
    const job = asJob(await liveOps.createJob('p1'));
    assert.equal(job.status, 'active');
    assert.equal(job.prLink, null);
    const done = await settle('p1', job.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.prLink, 'https://github.com/sim-org/p1-docs/pull/1');
    assert.equal(done.archivedAt, null);
    assert.equal(live.job(job.id)?.status, 'completed');
  });

  test('completed without edits: prLink null', async () => {
    live.configureProject('quiet', { jobs: { outcome: 'completed-no-edits' } });
    const job = asJob(await liveOps.createJob('quiet'));
    const done = await settle('quiet', job.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.prLink, null);
  });

  test('failed, then a message is refused with 409 and not recorded', async () => {
    live.configureProject('broken', { jobs: { outcome: 'failed' } });
    const job = asJob(await liveOps.createJob('broken'));
    const failed = await settle('broken', job.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.prLink, null);
    const refused = await liveOps.sendMessage('broken', job.id);
    assert.equal(refused.status, 409);
    assert.equal(asError(refused).code, 'conflict');
    assert.deepEqual(live.job(job.id)?.messages, []);
    assert.equal(live.stats().messagesAccepted, 0);
  });

  test('archived with archiveAfterMs: completed first, then archived with archivedAt; 409 for a message', async () => {
    live.configureProject('old', { jobs: { outcome: 'archived', archiveAfterMs: 400 } });
    const job = asJob(await liveOps.createJob('old'));
    const completed = await settle('old', job.id);
    assert.equal(completed.status, 'completed');
    assert.equal(completed.archivedAt, null);
    const archived = await settle('old', job.id, 'completed');
    assert.equal(archived.status, 'archived');
    assert.ok(archived.archivedAt);
    const archivedAt = Date.parse(archived.archivedAt);
    assert.ok(archivedAt - Date.parse(archived.createdAt) >= 450, `${archived.createdAt} .. ${archivedAt}`);
    assert.ok(archivedAt <= Date.now());
    assert.equal(live.job(job.id)?.archivedAt, archived.archivedAt);
    assert.equal((await liveOps.sendMessage('old', job.id)).status, 409);
  });

  test('archived straight from active (archiveAfterMs 0): archivedAt set', async () => {
    live.configureProject('gone', { jobs: { outcome: 'archived' } });
    const job = asJob(await liveOps.createJob('gone'));
    const archived = await settle('gone', job.id);
    assert.equal(archived.status, 'archived');
    assert.equal(typeof archived.archivedAt, 'string');
    assert.ok(!Number.isNaN(Date.parse(archived.archivedAt ?? '')));
  });

  test('a message re-activates a completed job, which then completes again', async () => {
    const job = asJob(await liveOps.createJob('p1'));
    const first = await settle('p1', job.id);
    assert.equal(first.status, 'completed');
    const reopened = await liveOps.sendMessage('p1', job.id, { prompt: 'One more page' });
    assert.equal(reopened.status, 200);
    assert.equal(asJob(reopened).status, 'active');
    assert.equal(asJob(reopened).prLink, null);
    const again = await settle('p1', job.id);
    assert.equal(again.status, 'completed');
    assert.equal(again.prLink, first.prLink);
    assert.deepEqual(
      live.job(job.id)?.messages.map((m) => m.prompt),
      ['One more page'],
    );
  });

  test('completeJob ends a long job at once', async () => {
    live.configureProject('slow', { jobs: { durationMs: 3_600_000 } });
    const job = asJob(await liveOps.createJob('slow'));
    assert.equal(asJob(await liveOps.getJob('slow', job.id)).status, 'active');
    live.completeJob(job.id);
    assert.equal(asJob(await liveOps.getJob('slow', job.id)).status, 'completed');
    const other = asJob(await liveOps.createJob('slow'));
    live.completeJob(other.id, 'archived');
    const archived = asJob(await liveOps.getJob('slow', other.id));
    assert.equal(archived.status, 'archived');
    assert.equal(typeof archived.archivedAt, 'string');
  });
});

describe('job state machine', () => {
  test('create answers 201 with the job object; get follows it to completed with a PR link', async () => {
    const created = await h.ops.createJob('p1', { prompt: 'Document the API' });
    assert.equal(created.status, 201);
    const job = asJob(created);
    assert.match(job.id, /^job_\w+$/);
    assert.deepEqual(job, {
      id: job.id,
      status: 'active',
      source: { repository: 'https://github.com/sim-org/p1-docs', ref: 'main' },
      model: 'sim-agent-1',
      prLink: null,
      createdAt: new Date(clock.now()).toISOString(),
      archivedAt: null,
    });
    clock.advance(999);
    assert.equal(asJob(await h.ops.getJob('p1', job.id)).status, 'active');
    clock.advance(1);
    const done = asJob(await h.ops.getJob('p1', job.id));
    assert.equal(done.status, 'completed');
    assert.match(done.prLink ?? '', /^https:\/\/github\.com\/sim-org\/p1-docs\/pull\/\d+$/);
    assert.equal(done.archivedAt, null);
    assert.equal(h.sim.stats().jobsCreated, 1);
    assert.deepEqual(h.sim.stats().jobsCreatedByProject, { p1: 1 });
    assert.equal(h.sim.job(job.id)?.prompt, 'Document the API');
    const [create] = h.sim.requests();
    assert.equal(create?.jobId, job.id);
    assert.equal(create?.prompt, 'Document the API');
    assert.equal(create?.processed, true);
  });

  test('pull requests are numbered per repository', async () => {
    const a = asJob(await h.ops.createJob('p1'));
    const b = asJob(await h.ops.createJob('p1'));
    const c = asJob(await h.ops.createJob('p2'));
    clock.advance(1000);
    const links = await Promise.all([
      h.ops.getJob('p1', a.id),
      h.ops.getJob('p1', b.id),
      h.ops.getJob('p2', c.id),
    ]);
    assert.deepEqual(
      links.map((l) => asJob(l).prLink),
      [
        'https://github.com/sim-org/p1-docs/pull/1',
        'https://github.com/sim-org/p1-docs/pull/2',
        'https://github.com/sim-org/p2-docs/pull/1',
      ],
    );
  });

  test('completed without edits: no PR link', async () => {
    h.sim.configureProject('quiet', { jobs: { outcome: 'completed-no-edits' } });
    const job = asJob(await h.ops.createJob('quiet'));
    clock.advance(1000);
    const done = asJob(await h.ops.getJob('quiet', job.id));
    assert.equal(done.status, 'completed');
    assert.equal(done.prLink, null);
  });

  test('failed: no PR link, and a message is refused with 409', async () => {
    h.sim.configureProject('broken', { jobs: { outcome: 'failed', durationMs: 50 } });
    const job = asJob(await h.ops.createJob('broken'));
    clock.advance(50);
    const failed = asJob(await h.ops.getJob('broken', job.id));
    assert.equal(failed.status, 'failed');
    assert.equal(failed.prLink, null);
    const refused = await h.ops.sendMessage('broken', job.id);
    assert.equal(refused.status, 409);
    assert.equal(asError(refused).code, 'conflict');
    assert.equal(h.sim.stats().messagesAccepted, 0);
    assert.deepEqual(h.sim.job(job.id)?.messages, []);
  });

  test('archived straight from active, archivedAt set; messages refused with 409', async () => {
    h.sim.configureProject('old', { jobs: { outcome: 'archived' } });
    const job = asJob(await h.ops.createJob('old'));
    const end = clock.now() + 1000;
    clock.advance(1000);
    const archived = asJob(await h.ops.getJob('old', job.id));
    assert.equal(archived.status, 'archived');
    assert.equal(archived.archivedAt, new Date(end).toISOString());
    assert.equal((await h.ops.sendMessage('old', job.id)).status, 409);
  });

  test('archived after a completed period when archiveAfterMs > 0', async () => {
    h.sim.configureProject('later', { jobs: { outcome: 'archived', archiveAfterMs: 500 } });
    const job = asJob(await h.ops.createJob('later'));
    clock.advance(1000);
    const completed = asJob(await h.ops.getJob('later', job.id));
    assert.equal(completed.status, 'completed');
    assert.match(completed.prLink ?? '', /\/pull\/\d+$/);
    assert.equal(completed.archivedAt, null);
    clock.advance(499);
    assert.equal(asJob(await h.ops.getJob('later', job.id)).status, 'completed');
    clock.advance(1);
    const archived = asJob(await h.ops.getJob('later', job.id));
    assert.equal(archived.status, 'archived');
    assert.equal(archived.archivedAt, new Date(clock.now()).toISOString());
  });

  test('a message to an active job is recorded in order and extends the active period', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    clock.advance(600);
    const first = await h.ops.sendMessage('p1', job.id, { prompt: 'first' });
    assert.equal(first.status, 200);
    assert.equal(asJob(first).status, 'active');
    clock.advance(100);
    await h.ops.sendMessage('p1', job.id, { prompt: 'second' });
    clock.advance(999);
    assert.equal(asJob(await h.ops.getJob('p1', job.id)).status, 'active');
    clock.advance(1);
    assert.equal(asJob(await h.ops.getJob('p1', job.id)).status, 'completed');
    assert.deepEqual(h.sim.job(job.id)?.messages, [
      { prompt: 'first', at: clock.now() - 1100 },
      { prompt: 'second', at: clock.now() - 1000 },
    ]);
    assert.equal(h.sim.stats().messagesAccepted, 2);
  });

  test('a message to a completed job makes it active again, then completed with the same PR', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    clock.advance(1000);
    const done = asJob(await h.ops.getJob('p1', job.id));
    assert.equal(done.status, 'completed');
    const reopened = asJob(await h.ops.sendMessage('p1', job.id, { prompt: 'One more thing' }));
    assert.equal(reopened.status, 'active');
    assert.equal(reopened.prLink, null);
    clock.advance(1000);
    const again = asJob(await h.ops.getJob('p1', job.id));
    assert.equal(again.status, 'completed');
    assert.equal(again.prLink, done.prLink);
  });

  test('completeJob forces the terminal transition now; unknown ids throw', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    h.sim.completeJob(job.id, 'failed');
    assert.equal(asJob(await h.ops.getJob('p1', job.id)).status, 'failed');
    const other = asJob(await h.ops.createJob('p1'));
    h.sim.completeJob(other.id);
    assert.equal(asJob(await h.ops.getJob('p1', other.id)).status, 'completed');
    assert.equal(h.sim.job(other.id)?.status, 'completed');
    assert.throws(() => h.sim.completeJob('job_nope'), /job_nope/);
  });

  test('404 for an unknown job, and for a job of another project', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    for (const answer of [
      await h.ops.getJob('p1', 'job_missing'),
      await h.ops.sendMessage('p1', 'job_missing'),
      await h.ops.getJob('p2', job.id),
      await h.ops.sendMessage('p2', job.id),
    ]) {
      assert.equal(answer.status, 404);
      assert.equal(asError(answer).code, 'not_found');
    }
    assert.equal(h.sim.stats().messagesAccepted, 0);
  });
});

describe('request validation', () => {
  test('create and message: 400 naming prompt; invalid JSON: 400; nothing created or recorded', async () => {
    const job = asJob(await h.ops.createJob('p1'));
    const bad: [unknown, string][] = [
      [{}, 'prompt'],
      [{ prompt: '' }, 'prompt'],
      [{ prompt: 5 }, 'prompt'],
      [['prompt'], 'prompt'],
      [null, 'prompt'],
    ];
    for (const [body, field] of bad) {
      for (const answer of [await h.ops.createJob('p1', body), await h.ops.sendMessage('p1', job.id, body)]) {
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.equal(asError(answer).code, 'invalid_request');
        assert.equal(asError(answer).field, field);
      }
    }
    for (const path of ['/v2/agent/p1/job', `/v2/agent/p1/job/${job.id}/message`]) {
      const noBody = await call(h.sim, 'POST', path);
      assert.equal(noBody.status, 400);
      assert.equal(asError(noBody).field, 'prompt');
      const notJson = await call(h.sim, 'POST', path, { raw: '{"prompt": "x"' });
      assert.equal(notJson.status, 400);
      assert.equal(asError(notJson).code, 'invalid_request');
      assert.equal(asError(notJson).field, 'body');
    }
    assert.equal(h.sim.stats().jobsCreated, 1);
    assert.equal(h.sim.stats().messagesAccepted, 0);
  });
});

describe("the agent budget (the service's 100 creates and messages per project-hour)", () => {
  test('past the budget: 429 with a numeric Retry-After, nothing created, logged as not processed', async () => {
    const limited = await startSimulator({
      budgets: { agent: { requests: 2, windowMs: 3_600_000 } },
      errorBodies: 'detailed',
    });
    try {
      const l = api(limited);
      assert.equal((await l.createJob('p1')).status, 201);
      assert.equal((await l.createJob('p1')).status, 201);
      const third = await l.createJob('p1');
      assert.equal(third.status, 429);
      assert.equal(asError(third).code, 'rate_limited');
      const retryAfter = String(third.headers['retry-after']);
      assert.match(retryAfter, /^\d+$/);
      assert.ok(Number(retryAfter) > 0 && Number(retryAfter) <= 3600, retryAfter);
      assert.equal(limited.stats().jobsCreated, 2);
      assert.equal(limited.stats().budgetRefusals.agent, 1);
      assert.deepEqual(
        limited.requests().map((r) => [r.status, r.processed]),
        [
          [201, true],
          [201, true],
          [429, false],
        ],
      );
    } finally {
      await limited.close();
    }
  });

  test('on by default: 100 per project and window, creates and messages together', async () => {
    const first = asJob(await h.ops.createJob('busy'));
    for (let i = 0; i < 98; i++) assert.equal((await h.ops.createJob('busy')).status, 201);
    assert.equal((await h.ops.sendMessage('busy', first.id)).status, 200, 'the 100th: a message');
    const refused = await h.ops.createJob('busy');
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await h.ops.createJob('quiet')).status, 201, 'another project has its own budget');
  });
});
