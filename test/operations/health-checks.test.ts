import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { request } from 'undici';
import type { State } from '@temporalio/worker';
import { ServerReachability, startHealthServer, workerChecks } from '../../src/operations/health';

describe('ServerReachability', () => {
  test('reachable after an answer, lost once no check answered for the tolerance', async () => {
    let now = 0;
    let serverUp = true;
    const reach = new ServerReachability(
      () => (serverUp ? Promise.resolve() : Promise.reject(new Error('connection refused\nstack'))),
      { toleranceMs: 15_000, now: () => now },
    );
    assert.match(reach.probe().reason, /never answered/);
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true);
    serverUp = false;
    now = 10_000;
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true, 'one failed check within the tolerance is not an outage');
    now = 15_001;
    await reach.checkOnce();
    assert.deepEqual(reach.probe(), {
      ok: false,
      reason: 'server unreachable (no answer for 15 s): connection refused',
    });
    serverUp = true;
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true);
  });
});

describe('workerChecks and the health server', () => {
  test('ready only while RUNNING with the server reachable; live unless FAILED', async () => {
    let state: State | undefined;
    let server = { ok: true, reason: 'server reachable' };
    const health = await startHealthServer(
      0,
      workerChecks(
        () => state,
        () => server,
      ),
      '127.0.0.1',
    );
    const status = async (path: string) => {
      const response = await request(`http://127.0.0.1:${health.port}${path}`);
      return `${response.statusCode} ${(await response.body.text()).trim()}`;
    };
    try {
      assert.equal(await status('/livez'), '200 worker starting');
      assert.equal(await status('/readyz'), '503 worker starting');
      state = 'RUNNING';
      assert.equal(await status('/readyz'), '200 worker running, server reachable');
      server = { ok: false, reason: 'server unreachable (never answered): refused' };
      assert.equal(await status('/readyz'), '503 server unreachable (never answered): refused');
      server = { ok: true, reason: 'server reachable' };
      state = 'DRAINING';
      assert.equal(await status('/readyz'), '503 worker draining');
      assert.equal(await status('/livez'), '200 worker draining');
      state = 'FAILED';
      assert.equal(await status('/livez'), '503 worker failed');
      assert.equal(await status('/metrics'), '404 not found: /livez or /readyz');
    } finally {
      await health.close();
    }
  });
});
