import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportInput, VisitorsExportResult } from '../../src/contract/visitors-export';
import { startSimulator, type Simulator } from '../../src/simulator';
import { visitorsExport } from '../../src/workflows';
import { startTemporal } from '../helpers/temporal';
import { startTestWorker, type TestWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
let sim: Simulator;
let worker: TestWorker;
let exportDir: string;
let runs = 0;

before(async () => {
  env = await startTemporal();
  sim = await startSimulator();
  exportDir = await fs.mkdtemp(path.join(os.tmpdir(), 'visitors-export-'));
  worker = await startTestWorker(env, { service: sim, exportDir });
});
after(async () => {
  await worker.stop();
  await sim.close();
  await env.teardown();
  await fs.rm(exportDir, { recursive: true, force: true });
});
afterEach(() => sim.reset());

function start(input: VisitorsExportInput) {
  const dateFrom = input.dateFrom ?? 'none';
  const dateTo = input.dateTo ?? 'none';
  return env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: `${visitorsExportWorkflowId(input.projectId, dateFrom, dateTo)}/${++runs}`,
    args: [input],
  });
}

async function run(input: VisitorsExportInput): Promise<VisitorsExportResult> {
  return (await start(input)).result();
}

const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

async function readExport(result: VisitorsExportResult, format = 'csv') {
  const dir = path.join(exportDir, result.projectId, `${result.dateFrom}_${result.dateTo}`);
  const content = await fs.readFile(path.join(dir, `visitors.${format}`), 'utf8');
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const totals = JSON.parse(await fs.readFile(path.join(dir, 'totals.json'), 'utf8')) as unknown;
  return { dir, content, manifest, totals, sha256: createHash('sha256').update(content).digest('hex') };
}

function visitorRequests(projectId: string) {
  return sim.requests().filter((r) => r.route === 'getVisitors' && r.projectId === projectId);
}

describe('visitorsExport', () => {
  test('0 rows: an export with only the header, one request', async () => {
    sim.configureProject('empty', { visitorPaths: 0 });
    const result = await run({ projectId: 'empty', ...RANGE });
    assert.equal(result.rows, 0);
    assert.equal(result.pages, 1);
    const out = await readExport(result);
    assert.equal(out.content, 'path,human,ai,total\n');
    assert.deepEqual(result.totals, { human: 0, ai: 0, total: 0 });
    assert.ok(visitorRequests('empty').length <= 4, 'at most concurrency - 1 wasted requests');
  });

  test('one partial page', async () => {
    sim.configureProject('small', { visitorPaths: 120 });
    const result = await run({ projectId: 'small', ...RANGE, concurrency: 1 });
    assert.equal(result.rows, 120);
    assert.equal(result.pages, 1);
    assert.equal(visitorRequests('small').length, 1);
    const out = await readExport(result);
    assert.equal(out.content.trim().split('\n').length, 121);
  });

  test('an exact multiple of pageSize: the last full page says hasMore false', async () => {
    sim.configureProject('exact', { visitorPaths: 500 });
    const result = await run({
      projectId: 'exact',
      ...RANGE,
      pageSize: 250,
      concurrency: 2,
      format: 'ndjson',
    });
    assert.equal(result.rows, 500);
    assert.equal(result.pages, 2);
    const offsets = visitorRequests('exact').map((r) => Number(r.query.offset));
    assert.deepEqual([...new Set(offsets)].sort((a, b) => a - b).slice(0, 2), [0, 250]);
    assert.ok(offsets.length <= 3, `at most concurrency - 1 wasted requests, saw ${offsets.join(',')}`);
    const out = await readExport(result, 'ndjson');
    const paths = out.content
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { path: string }).path);
    assert.equal(new Set(paths).size, 500);
  });

  test('10,000 rows at concurrency 8: rows, totals, checksum, manifest, progress', async () => {
    sim.configureProject('big', { visitorPaths: 10_000 });
    const handle = await start({ projectId: 'big', ...RANGE, concurrency: 8 });
    const result = await handle.result();
    assert.equal(result.rows, 10_000);
    assert.equal(result.pages, 40);
    assert.deepEqual(result.warnings, []);
    const out = await readExport(result);
    assert.equal(out.content.trim().split('\n').length, 10_001);
    assert.equal(out.manifest.sha256, out.sha256);
    assert.equal(out.manifest.rows, 10_000);
    assert.equal(out.manifest.workflowId, handle.workflowId);
    const first = await env.client.workflow.getHandle(handle.workflowId).query('getProgress');
    assert.deepEqual(first, { pagesDone: 40, rowsDone: 10_000, inFlight: 0, done: true });
    assert.deepEqual(out.totals, result.totals);
    assert.ok(result.totals.total >= Math.max(result.totals.human, result.totals.ai));
    const offsets = visitorRequests('big').map((r) => Number(r.query.offset));
    assert.equal(new Set(offsets.filter((o) => o < 10_000)).size, 40);
    assert.ok(offsets.filter((o) => o >= 10_000).length <= 7, 'at most concurrency - 1 pages past the end');
  });

  test('5xx and 429 during the export: retried, Retry-After honoured, nothing lost', async () => {
    sim.configureProject('flaky', { visitorPaths: 1000 });
    sim.faults.add({ route: 'getVisitors', projectId: 'flaky', kind: 'status', status: 502, times: 3 });
    sim.faults.add({
      route: 'getVisitors',
      projectId: 'flaky',
      kind: 'rateLimit',
      retryAfter: { seconds: 1 },
      times: 2,
    });
    const result = await run({ projectId: 'flaky', ...RANGE, pageSize: 100, concurrency: 4 });
    assert.equal(result.rows, 1000);
    const out = await readExport(result);
    assert.equal(out.content.trim().split('\n').length, 1001);
    const statuses = visitorRequests('flaky').map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 502).length, 3);
    assert.equal(statuses.filter((s) => s === 429).length, 2);
  });

  test('a 4xx ends the export with a clear failure', async () => {
    sim.faults.add({ route: 'getVisitors', projectId: 'denied', kind: 'status', status: 403 });
    await assert.rejects(run({ projectId: 'denied', ...RANGE }), (error: unknown) => {
      assert.ok(error instanceof WorkflowFailedError);
      assert.ok(error.cause instanceof ApplicationFailure);
      assert.equal(error.cause.type, 'VisitorsExportPageFailed');
      assert.match(error.cause.message, /offset \d+ failed: .*not authorized/);
      return true;
    });
  });

  const badInputs: [string, Record<string, unknown>, RegExp][] = [
    ['missing projectId', { ...RANGE }, /projectId: is required/],
    ['projectId with /', { projectId: 'a/b', ...RANGE }, /projectId: must start with a letter or digit/],
    [
      'inverted dates',
      { projectId: 'p', dateFrom: '2026-11-02', dateTo: '2026-11-01' },
      /dateTo: must be after dateFrom/,
    ],
    [
      'invalid date',
      { projectId: 'p', dateFrom: '2026-02-30', dateTo: '2026-03-01' },
      /dateFrom: must be YYYY-MM-DD/,
    ],
    ['pageSize 251', { projectId: 'p', ...RANGE, pageSize: 251 }, /pageSize: must be at most 250/],
    ['pageSize 0', { projectId: 'p', ...RANGE, pageSize: 0 }, /pageSize: must be at least 1/],
    ['concurrency 17', { projectId: 'p', ...RANGE, concurrency: 17 }, /concurrency: must be at most 16/],
    ['no dates outside a schedule', { projectId: 'p' }, /dateFrom, dateTo: are required unless/],
  ];
  for (const [name, input, message] of badInputs) {
    test(`bad input: ${name}`, async () => {
      await assert.rejects(run(input as unknown as VisitorsExportInput), (error: unknown) => {
        assert.ok(error instanceof WorkflowFailedError);
        assert.ok(error.cause instanceof ApplicationFailure);
        assert.equal(error.cause.type, 'InvalidInput');
        assert.equal(error.cause.nonRetryable, true);
        assert.match(error.cause.message, message);
        return true;
      });
      assert.equal(sim.requests().length, 0, 'no request reaches the service');
    });
  }

  test('re-running a range replaces the export whole', async () => {
    sim.configureProject('rerun', { visitorPaths: 300 });
    await run({ projectId: 'rerun', ...RANGE, format: 'json' });
    sim.configureProject('rerun', { visitorPaths: 50 });
    const second = await run({ projectId: 'rerun', ...RANGE, format: 'csv' });
    const out = await readExport(second);
    assert.equal(out.content.trim().split('\n').length, 51);
    const files = (await fs.readdir(out.dir)).sort();
    assert.deepEqual(files, ['manifest.json', 'totals.json', 'visitors.csv']);
    assert.deepEqual(await fs.readdir(path.join(exportDir, '.staging')).catch(() => []), []);
  });

  test('100,000 paths: history stays under 2 MB and 2,000 events per run, rows do not flow through it', async () => {
    sim.configureProject('huge', { visitorPaths: 100_000 });
    const handle = await start({ projectId: 'huge', ...RANGE, concurrency: 16 });
    const result = await handle.result();
    assert.equal(result.rows, 100_000);
    assert.equal(result.pages, 400);
    const runIds = await listRuns(handle.workflowId);
    assert.ok(runIds.length >= 1);
    const histories = await Promise.all(
      runIds.map((runId) => env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()),
    );
    for (const history of histories) {
      const events = history.events?.length ?? 0;
      const bytes = JSON.stringify(history).length;
      assert.ok(events < 2000, `a run has ${events} events`);
      assert.ok(bytes < 2 * 1024 * 1024, `a run's history is ${bytes} bytes`);
      assert.ok(!JSON.stringify(history).includes('/guides/page-'), 'rows must not flow through history');
    }
  });
});

async function listRuns(workflowId: string): Promise<string[]> {
  const runIds: string[] = [];
  for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runIds.push(execution.runId);
  }
  return runIds;
}
