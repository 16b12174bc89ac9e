import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { request } from 'undici';
import type { State } from '@temporalio/worker';
import { ServerReachability, startHealthServer } from '../../src/operations/health';
import { createLogger } from '../../src/operations/logging';

describe('ServerReachability', () => {
  function reachability() {
    let now = 0;
    let serverUp = true;
    const lines: string[] = [];
    const holder: { reach?: ServerReachability } = {};
    const logger = createLogger({
      format: 'text',
      level: 'info',
      write: (line) => lines.push(line.slice(line.indexOf(' ') + 1).trimEnd()),
      mute: (entry) => holder.reach?.mutes(entry) ?? false,
    });
    const reach = new ServerReachability(
      () => (serverUp ? Promise.resolve() : Promise.reject(new Error('connection refused\nstack'))),
      'temporal.internal:7233',
      logger,
      () => now,
    );
    holder.reach = reach;
    return {
      reach,
      logger,
      lines,
      at: (ms: number) => void (now = ms),
      server: (up: boolean) => void (serverUp = up),
    };
  }

  test('reachable after an answer, lost once no check answered for the tolerance', async () => {
    const { reach, at, server } = reachability();
    assert.match(reach.probe().reason, /never answered/);
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true);
    server(false);
    at(10_000);
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true, 'one failed check within the tolerance is not an outage');
    at(15_001);
    await reach.checkOnce();
    assert.deepEqual(reach.probe(), {
      ok: false,
      reason: 'server unreachable (no answer for 15 s): connection refused',
    });
    server(true);
    await reach.checkOnce();
    assert.equal(reach.probe().ok, true);
  });

  test('an outage is one error line when the server is lost and one info line when it answers again', async () => {
    const { reach, lines, at, server } = reachability();
    await reach.checkOnce();
    server(false);
    for (const ms of [5_000, 10_000, 16_000, 21_000, 26_000]) {
      at(ms);
      await reach.checkOnce();
    }
    server(true);
    at(31_000);
    await reach.checkOnce();
    await reach.checkOnce();
    assert.deepEqual(lines, [
      '[ERROR] Lost the Temporal server at temporal.internal:7233: server unreachable (no answer for 16 s): ' +
        "connection refused { address: 'temporal.internal:7233' }",
      '[INFO] Temporal server at temporal.internal:7233 reachable again after 31 s without an answer ' +
        "{ address: 'temporal.internal:7233', downSeconds: 31 }",
    ]);
  });

  test("the core's lines about unanswered calls: one until the server answers a check again", async () => {
    const { reach, logger, lines } = reachability();
    const retry = { sdkComponent: 'core', target: 'temporalio_client::retry' };
    logger.warn('gRPC call poll_workflow_task_queue retried 6 times', retry);
    logger.warn('gRPC call poll_activity_task_queue retried 6 times', retry);
    logger.error('gRPC call poll_workflow_task_queue retried 16 times', retry);
    logger.warn('Error while polling for activity tasks', {
      sdkComponent: 'core',
      target: 'temporalio_sdk_core',
    });
    logger.warn('Activity failed', { sdkComponent: 'activity', activityType: 'pollAgentJob' });
    await reach.checkOnce();
    logger.warn('Error while polling for workflow tasks', {
      sdkComponent: 'core',
      target: 'temporalio_sdk_core',
    });
    assert.deepEqual(
      lines.map((line) => line.split(' {')[0]),
      [
        '[WARN] gRPC call poll_workflow_task_queue retried 6 times',
        '[WARN] Activity failed',
        '[WARN] Error while polling for workflow tasks',
      ],
    );
  });
});

describe('the health server', () => {
  test('ready only while RUNNING with the server reachable; live unless FAILED', async () => {
    let state: State | undefined;
    let server = { ok: true, reason: 'server reachable' };
    const health = await startHealthServer(
      0,
      () => state,
      () => server,
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
