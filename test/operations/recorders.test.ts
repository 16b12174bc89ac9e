import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Context } from '@temporalio/activity';
import { recordActivityMetrics } from '../../src/operations/recorders';
import { STATUS_CLASSES, WorkerMetrics } from '../../src/operations/metrics';
import { recordingMeter, seriesKey } from '../helpers/recording-meter';

async function run(metrics: WorkerMetrics, activityType: string, input: unknown, result: unknown) {
  const ctx = { info: { activityType }, log: { warn: () => undefined } } as unknown as Context;
  const execute = recordActivityMetrics(metrics)(ctx).inbound?.execute;
  assert.ok(execute);
  return execute({ args: [input], headers: {} }, () => Promise.resolve(result));
}

test('a result of an unexpected shape costs a warning, never the activity', async () => {
  const metrics = new WorkerMetrics(recordingMeter().meter);
  assert.equal(await run(metrics, 'mergeVisitorsExport', undefined, 'odd'), 'odd');
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
    assert.equal(values.get(seriesKey('docs_agent_jobs_started_total', { project: 'p' })), 1);
  });
});

describe('counters at 0', () => {
  test("from the start for every endpoint and status class; a project's once the worker meets it", async () => {
    const { meter, values } = recordingMeter();
    const metrics = new WorkerMetrics(meter);
    for (const endpoint of ['createJob', 'getJob', 'sendMessage', 'getVisitors']) {
      assert.equal(values.get(seriesKey('docs_agent_service_rate_limited_total', { endpoint })), 0, endpoint);
      for (const status_class of STATUS_CLASSES) {
        const series = seriesKey('docs_agent_service_requests_total', { endpoint, status_class });
        assert.equal(values.get(series), 0, series);
      }
    }
    assert.equal(
      values.get(seriesKey('docs_agent_jobs_ended_total', { project: 'p', status: 'failed' })),
      undefined,
    );
    // The first poll of a project: its failed jobs are at 0 before any ends.
    await run(metrics, 'pollAgentJob', { projectId: 'p' }, { job: { status: 'active' } });
    assert.equal(values.get(seriesKey('docs_agent_job_polls_total', { project: 'p' })), 1);
    for (const status of ['completed', 'archived', 'failed']) {
      assert.equal(values.get(seriesKey('docs_agent_jobs_ended_total', { project: 'p', status })), 0, status);
    }
    assert.equal(
      values.get(seriesKey('docs_agent_export_rows_total', { project: 'p', format: 'parquet' })),
      0,
    );
    await run(metrics, 'pollAgentJob', { projectId: 'p' }, { job: { status: 'failed' } });
    assert.equal(values.get(seriesKey('docs_agent_jobs_ended_total', { project: 'p', status: 'failed' })), 1);
  });
});

test('a gauge series its owner no longer keeps reads NaN; the others keep their value', () => {
  const { meter, values } = recordingMeter();
  const metrics = new WorkerMetrics(meter);
  const [kept, gone] = [
    { project: 'kept', time_zone: 'UTC' },
    { project: 'gone', time_zone: 'UTC' },
  ];
  metrics.record('nightlyWatermarkSeconds', 86_400, kept);
  metrics.record('nightlyWatermarkSeconds', 86_400, gone);
  metrics.retain('nightlyWatermarkSeconds', (labels) => labels.project === 'kept');
  assert.equal(values.get(seriesKey('docs_agent_nightly_watermark_seconds', kept)), 86_400);
  assert.ok(Number.isNaN(values.get(seriesKey('docs_agent_nightly_watermark_seconds', gone))));
});
