import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { recordActivityMetrics } from '../../src/operations/activity-metrics';
import { endpointOf } from '../../src/operations/docs-api-metrics';
import { WorkerMetrics } from '../../src/operations/metrics';
import { addDays, dayBefore } from '../../src/contract/zone-days';

/** A meter that keeps what is recorded: `name{tags}` → last value (gauges) or sum (counters). */
function recordingMeter(): { meter: MetricMeter; values: Map<string, number> } {
  const values = new Map<string, number>();
  const key = (name: string, tags: MetricTags) => `${name}${JSON.stringify(tags)}`;
  const meter: MetricMeter = {
    withTags: () => meter,
    createCounter: (name) => ({
      ...noopMetricMeter.createCounter(name),
      add: (value, tags = {}) => values.set(key(name, tags), (values.get(key(name, tags)) ?? 0) + value),
    }),
    createGauge: (name) => ({
      ...noopMetricMeter.createGauge(name),
      set: (value, tags = {}) => values.set(key(name, tags), value),
    }),
    createHistogram: (name) => noopMetricMeter.createHistogram(name),
  };
  return { meter, values };
}

async function run(metrics: WorkerMetrics, activityType: string, input: unknown, result: unknown) {
  const ctx = { info: { activityType }, log: { warn: () => undefined } } as unknown as Context;
  const execute = recordActivityMetrics(metrics)(ctx).inbound?.execute;
  assert.ok(execute);
  return execute({ args: [input], headers: {} }, () => Promise.resolve(result));
}

describe('nightly recorders', () => {
  test('days behind the watermark up to yesterday in the zone, its end as Unix seconds, days exported', async () => {
    const { meter, values } = recordingMeter();
    const metrics = new WorkerMetrics(meter);
    const timeZone = 'Europe/Paris';
    const yesterday = dayBefore(new Date(), timeZone);
    const watermark = addDays(yesterday, -3);
    const tags = JSON.stringify({ project: 'p', time_zone: timeZone });
    await run(metrics, 'planNightlyExport', { projectId: 'p' }, { timeZone, watermark, days: [] });
    assert.equal(values.get(`docs_agent_nightly_days_behind${tags}`), 3);
    assert.equal(
      values.get(`docs_agent_nightly_watermark_seconds${tags}`),
      Date.parse(`${addDays(watermark, 1)}T00:00:00Z`) / 1000,
    );
    // A failed day is not counted as exported, and the watermark stays.
    await run(
      metrics,
      'reportNightlyDay',
      { projectId: 'p', timeZone, day: addDays(watermark, 1), error: '403' },
      { watermark, done: [] },
    );
    assert.equal(values.get(`docs_agent_nightly_days_behind${tags}`), 3);
    assert.equal(values.get(`docs_agent_nightly_days_exported_total${tags}`), undefined);
    await run(
      metrics,
      'reportNightlyDay',
      { projectId: 'p', timeZone, day: yesterday },
      { watermark: yesterday, done: [] },
    );
    assert.equal(values.get(`docs_agent_nightly_days_behind${tags}`), 0);
    assert.equal(values.get(`docs_agent_nightly_days_exported_total${tags}`), 1);
  });

  test('a result of an unexpected shape costs a warning, never the activity', async () => {
    const metrics = new WorkerMetrics(recordingMeter().meter);
    assert.equal(await run(metrics, 'mergeVisitorsExport', undefined, 'odd'), 'odd');
  });
});

test('endpointOf: the four operations under any base path, anything else other', () => {
  assert.equal(endpointOf('POST', '/v2/agent/p1/job'), 'createJob');
  assert.equal(endpointOf('GET', '/api/v2/agent/p1/job/j1'), 'getJob');
  assert.equal(endpointOf('POST', '/v2/agent/p1/job/j1/message'), 'sendMessage');
  assert.equal(endpointOf('GET', '/v1/analytics/p1/visitors?dateFrom=2026-01-01&limit=250'), 'getVisitors');
  assert.equal(endpointOf('DELETE', '/v2/agent/p1/job/j1'), 'other');
  assert.equal(endpointOf('GET', '/health'), 'other');
});

describe('agent job recorders', () => {
  test('a create counts a job started; one answered from its create record does not', async () => {
    const { meter, values } = recordingMeter();
    const metrics = new WorkerMetrics(meter);
    const input = { projectId: 'p', prompt: 'x' };
    await run(metrics, 'createAgentJob', input, { id: 'j1', status: 'active', prLink: null });
    const earlier = { runId: 'r1', recordedAt: '2026-11-27T00:00:00Z' };
    await run(metrics, 'createAgentJob', input, {
      id: 'j1',
      status: 'unread',
      prLink: null,
      alreadyCreatedBy: earlier,
    });
    assert.equal(values.get(`docs_agent_jobs_started_total${JSON.stringify({ project: 'p' })}`), 1);
  });
});
