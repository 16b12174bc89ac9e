import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { awaitAgentJob, sendFollowUpAndWait, startAgentJob } from '../../src/client/agent-job';
import { createVisitorsSchedule, deleteVisitorsSchedule } from '../../src/client/schedule';
import { runVisitorsExport } from '../../src/client/visitors-export';
import { DocsAgentMetrics, STATUS_CLASSES, WorkerMetrics } from '../../src/operations/metrics';
import { readNightlyWatermarks } from '../../src/operations/nightly-watermarks';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { startTemporal } from '../../dev/temporal';
import { startWorkerProcess, type WorkerProcess } from '../../dev/worker-process';
import { freePort } from '../../dev/ports';
import { DASHBOARD, deployExpressions } from '../helpers/deploy';
import { fireNights, settledRuns } from '../helpers/nightly';
import { parseExposition, sumOf, type Sample } from '../helpers/prometheus';
import { promtool, promtoolSkipped } from '../helpers/promtool';
import { recordingMeter, seriesKey } from '../helpers/recording-meter';
import { tempDir } from '../helpers/temp-dir';

let env: TestWorkflowEnvironment;
let sim: Simulator;
let worker: WorkerProcess;
let metricsPort: number;
let exportDir: string;

/** A worker process serving its metrics on `port`. */
function startMetricsWorker(port: number): WorkerProcess {
  return startWorkerProcess({
    temporalAddress: env.address,
    service: sim,
    exportDir,
    env: { WORKER_METRICS_PORT: String(port) },
  });
}

before(async () => {
  env = await startTemporal();
  sim = await startSimulator({ jobs: { durationMs: 1500 }, analytics: { paths: 900 } });
  metricsPort = await freePort();
  exportDir = await tempDir('metrics-export');
  worker = startMetricsWorker(metricsPort);
  await worker.ready;
});
after(async () => {
  try {
    await worker?.kill('SIGTERM');
    await sim?.close();
  } finally {
    await env?.teardown();
  }
});

async function exposition(port = metricsPort): Promise<string> {
  const response = await request(`http://127.0.0.1:${port}/metrics`);
  assert.equal(response.statusCode, 200);
  return response.body.text();
}

async function scrape(port = metricsPort): Promise<Sample[]> {
  return parseExposition(await exposition(port));
}

const M = Object.fromEntries(Object.entries(DocsAgentMetrics).map(([key, m]) => [key, m.name])) as {
  [K in keyof typeof DocsAgentMetrics]: (typeof DocsAgentMetrics)[K]['name'];
};

test('from its start, before any work: every request counter at 0, by endpoint and status class', async () => {
  const samples = await scrape();
  for (const endpoint of ['createJob', 'getJob', 'sendMessage', 'getVisitors']) {
    for (const status_class of STATUS_CLASSES) {
      const found = samples.find(
        (s) =>
          s.name === M.serviceRequests &&
          s.labels.endpoint === endpoint &&
          s.labels.status_class === status_class,
      );
      assert.equal(found?.value, 0, `${endpoint} ${status_class}`);
    }
    assert.equal(
      samples.find((s) => s.name === M.serviceRateLimited && s.labels.endpoint === endpoint)?.value,
      0,
    );
  }
});

test('after a job with a follow-up and a 429: jobs, follow-ups, polls, requests by endpoint and class', async () => {
  sim.faults.add({ route: 'getJob', kind: 'rateLimit', retryAfter: { seconds: 1 }, times: 1 });
  const project = 'metrics-job';
  const handle = await startAgentJob(
    env.client,
    { projectId: project, prompt: 'Count me', polling: { initialInterval: '200ms', maxInterval: '300ms' } },
    { key: 'k' },
  );
  await sendFollowUpAndWait(env.client, handle.workflowId, { prompt: 'And me', messageId: 'm1' });
  const result = await awaitAgentJob(env.client, handle.workflowId);
  assert.equal(result.status, 'completed');
  const stats = sim.stats();

  const samples = await scrape();
  assert.equal(sumOf(samples, M.jobsStarted, { project }), 1);
  assert.equal(sumOf(samples, M.jobsEnded, { project, status: 'completed' }), 1);
  assert.equal(sumOf(samples, M.jobsEnded, { project }), 1);
  assert.equal(sumOf(samples, M.followUpsDelivered, { project }), 1);
  assert.equal(sumOf(samples, M.jobPolls, { project }), result.polls, 'one per read the service answered');
  const requests = (endpoint: string, status_class: string) =>
    sumOf(samples, M.serviceRequests, { endpoint, status_class });
  assert.equal(requests('createJob', '2xx'), 1);
  assert.equal(requests('sendMessage', '2xx'), 1);
  assert.equal(requests('getJob', '4xx'), 1, 'the 429');
  assert.equal(requests('getJob', '2xx'), stats.requests.getJob - 1);
  assert.equal(sumOf(samples, M.serviceRateLimited, { endpoint: 'getJob' }), 1);
  assert.equal(
    sumOf(samples, `${M.serviceRequestSeconds}_count`, { endpoint: 'getJob' }),
    stats.requests.getJob,
  );
  assert.ok(
    sumOf(samples, `${M.budgetPermitWaitSeconds}_count`, { kind: 'agent' }) >= 2,
    'create and message',
  );
});

test('after an export: pages, rows and bytes as written, one merge timed, analytics permits', async () => {
  const project = 'metrics-export';
  const result = await runVisitorsExport(env.client, {
    projectId: project,
    dateFrom: '2026-01-01',
    dateTo: '2026-01-02',
    pageSize: 250,
    format: 'csv',
  });
  assert.ok(result.pages >= 3, `pages: ${result.pages}`);
  const exportFile = result.files.find((file) => file.endsWith('.csv'));
  assert.ok(exportFile);
  const bytes = (await fs.stat(path.resolve(exportDir, exportFile))).size;

  const samples = await scrape();
  const labels = { project, format: 'csv' };
  assert.equal(sumOf(samples, M.exportPages, labels), result.pages);
  assert.equal(sumOf(samples, M.exportRows, labels), result.rows);
  assert.equal(sumOf(samples, M.exportBytes, labels), bytes);
  assert.equal(sumOf(samples, `${M.exportMergeSeconds}_count`, { format: 'csv' }), 1);
  // Pages fetched ahead of the end are cancelled once the last page is known: `aborted`, not errors.
  const byClass = samples
    .filter((s) => s.name === M.serviceRequests && s.labels.endpoint === 'getVisitors' && s.value > 0)
    .map((s) => s.labels.status_class);
  assert.deepEqual(
    byClass.filter((c) => c !== '2xx' && c !== 'aborted'),
    [],
    byClass.join(','),
  );
  const answered = sumOf(samples, M.serviceRequests, { endpoint: 'getVisitors', status_class: '2xx' });
  assert.ok(answered >= result.pages && answered <= sim.stats().requests.getVisitors, `${answered} answered`);
  assert.ok(sumOf(samples, `${M.budgetPermitWaitSeconds}_count`, { kind: 'analytics' }) >= 1);
  // The SDK's own beside them, on the same endpoint.
  assert.ok(samples.some((s) => s.name.startsWith('temporal_')));
});

test("a worker started after a night exports the nightly's last whole instant from the server; deleted, it reads NaN", async () => {
  const project = 'metrics-nightly';
  const labels = { project, time_zone: 'UTC' };
  const endOfWatermarkDay = Date.parse('2026-11-02T00:00:00Z') / 1000;
  await createVisitorsSchedule(env.client, { projectId: project, at: '02:00', timeZone: 'UTC' });
  await fireNights(env.client, project, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
  const [night] = await settledRuns(env.client, project, 1);
  assert.equal(night?.wholeThrough, '2026-11-02T00:00:00.000Z');
  // The worker that ran the night counted the day.
  assert.equal(sumOf(await scrape(), M.nightlyDayExports, labels), 1);

  // A process that ran no night: the watermark is there from its start.
  const port = await freePort();
  const restarted = startMetricsWorker(port);
  try {
    await restarted.ready;
    const watermarkOf = (samples: Sample[]) =>
      samples.find((s) => s.name === M.nightlyWatermarkSeconds && s.labels.project === project);
    let samples = await scrape(port);
    for (const deadline = Date.now() + 30_000; !watermarkOf(samples) && Date.now() < deadline;) {
      await sleep(200);
      samples = await scrape(port);
    }
    assert.equal(watermarkOf(samples)?.value, endOfWatermarkDay);
    assert.deepEqual(watermarkOf(samples)?.labels, labels);
  } finally {
    await restarted.kill('SIGTERM');
  }

  // Each read after the schedule is deleted: NaN, which no rule fires on.
  const { meter, values } = recordingMeter();
  const metrics = new WorkerMetrics(meter);
  const watermark = () => values.get(seriesKey(M.nightlyWatermarkSeconds, labels));
  await readNightlyWatermarks(env.client, metrics);
  assert.equal(watermark(), endOfWatermarkDay);
  await deleteVisitorsSchedule(env.client, project);
  // Schedules are listed from visibility, a moment behind the delete.
  for (const deadline = Date.now() + 30_000; !Number.isNaN(watermark()) && Date.now() < deadline;) {
    await readNightlyWatermarks(env.client, metrics);
    await sleep(200);
  }
  assert.ok(Number.isNaN(watermark()), `${watermark()}`);
});

test('every metric the Grafana dashboard and the alert rules name is one the worker serves', async () => {
  // The SDK's as this worker served them after the job and the export; the worker's own from their one list,
  // whose values the tests above check (a histogram is served as _bucket, _sum and _count).
  const served = new Set((await scrape()).map((s) => s.name));
  for (const metric of Object.values(DocsAgentMetrics)) {
    const names =
      metric.kind === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => metric.name + s) : [metric.name];
    for (const name of names) served.add(name);
  }
  const named = new Map<string, Set<string>>();
  for (const [file, expressions] of Object.entries(await deployExpressions())) {
    for (const expression of expressions) {
      // Not the parts of a recorded series' name (`level:metric:operations`).
      for (const [name] of expression.matchAll(/(?<![:\w])(?:docs_agent|temporal)_[a-z0-9_]+\b(?!:)/g)) {
        named.set(name, (named.get(name) ?? new Set()).add(file));
      }
    }
  }
  const unknown = [...named]
    .filter(([name]) => !served.has(name))
    .map(([n, files]) => `${n} (${[...files].join(', ')})`);
  assert.deepEqual(unknown, []);
  // The dashboard shows every metric of the worker's own.
  const onDashboard = [...named].filter(([, files]) => files.has(DASHBOARD)).map(([name]) => name);
  for (const metric of Object.values(DocsAgentMetrics)) {
    assert.ok(
      onDashboard.some((name) => name.startsWith(metric.name)),
      `${metric.name} on the dashboard`,
    );
  }
});

test(
  'promtool check metrics: nothing to fix in what the worker serves',
  { skip: promtoolSkipped() },
  async () => {
    const text = await exposition();
    // Snake-case labels on the worker's own, whatever promtool says.
    for (const sample of parseExposition(text).filter((s) => s.name.startsWith('docs_agent_'))) {
      for (const label of Object.keys(sample.labels))
        assert.match(label, /^[a-z_]+$/, `${sample.name}: ${label}`);
    }
    const { code, output } = await promtool(['check', 'metrics'], text);
    assert.equal(output, '');
    assert.equal(code, 0);
  },
);
