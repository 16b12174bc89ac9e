import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { budgetLimiterWorkflowId, getBudgetStateQuery } from '../../src/contract/budget';
import { getProgressQuery } from '../../src/contract/messages';
import { ApiKey } from '../../src/docs-api/api-key';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type {
  VisitorsExportInput,
  VisitorsExportManifest,
  VisitorsExportResult,
} from '../../src/contract/visitors-export';
import { exportDirectory } from '../helpers/export-paths';
import { visitorsExport } from '../../src/workflows';
import { Worker } from '@temporalio/worker';
import { replayOptions } from '../../dev/workflow-bundle';
import { useStack } from '../helpers/stack';
import { withoutEndCheck } from '../helpers/page-requests';

const stack = useStack({ name: 'visitors-export' });
let runs = 0;

afterEach(() => stack.sim.reset());

function start(input: VisitorsExportInput) {
  const id = visitorsExportWorkflowId(input.projectId, input.dateFrom ?? 'none', input.dateTo ?? 'none');
  return stack.env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: `${id}/${++runs}`,
    args: [input],
  });
}

async function run(input: VisitorsExportInput): Promise<VisitorsExportResult> {
  return (await start(input)).result();
}

const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

async function readExport(result: VisitorsExportResult, format = 'csv') {
  const dir = exportDirectory(stack.exportDir, result.projectId, result.dateFrom, result.dateTo);
  const bytes = await fs.readFile(path.join(dir, `visitors.${format}`));
  const manifest = JSON.parse(
    await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'),
  ) as VisitorsExportManifest;
  const totals = JSON.parse(await fs.readFile(path.join(dir, 'totals.json'), 'utf8')) as unknown;
  return {
    dir,
    content: bytes.toString('utf8'),
    manifest,
    totals,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

function csvPaths(content: string): string[] {
  return content
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0] ?? '');
}

function visitorRequests(projectId: string) {
  return stack.sim.requests().filter((r) => r.route === 'getVisitors' && r.projectId === projectId);
}

function pageRequests(projectId: string) {
  return withoutEndCheck(visitorRequests(projectId));
}

/** Every run of a workflow (continue-as-new chain) with its history size as the server counts it. */
async function historySizes(workflowId: string) {
  const runs: { runId: string; events: number; bytes: number; json: string }[] = [];
  for await (const execution of stack.env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const handle = stack.env.client.workflow.getHandle(workflowId, execution.runId);
    const info = (await handle.describe()).raw.workflowExecutionInfo;
    runs.push({
      runId: execution.runId,
      events: Number(info?.historyLength ?? 0),
      bytes: Number(info?.historySizeBytes ?? 0),
      json: JSON.stringify(await handle.fetchHistory()),
    });
  }
  return runs;
}

/** Per activity type, the workflow task (its completed event's id) that scheduled each of its activities. */
function schedulingTasks(
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>,
): Map<string, string[]> {
  const tasks = new Map<string, string[]>();
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    const name = attributes?.activityType?.name;
    if (name) tasks.set(name, [...(tasks.get(name) ?? []), String(attributes?.workflowTaskCompletedEventId)]);
  }
  return tasks;
}

async function stagingLeft(): Promise<string[]> {
  return fs.readdir(path.join(stack.exportDir, '.staging')).catch(() => []);
}

describe('visitorsExport against the simulator', () => {
  test('0 rows: an export with only the header, at most concurrency - 1 wasted requests', async () => {
    stack.sim.configureProject('empty', { visitorPaths: 0 });
    const result = await run({ projectId: 'empty', ...RANGE });
    assert.equal(result.rows, 0);
    assert.equal(result.pages, 1);
    assert.deepEqual(result.totals, { human: 0, ai: 0, total: 0 });
    const out = await readExport(result);
    assert.equal(out.content, 'path,human,ai,total\n');
    assert.equal(out.manifest.rows, 0);
    assert.ok(visitorRequests('empty').length <= 4, 'at most concurrency - 1 wasted requests');
  });

  test('one partial page', async () => {
    stack.sim.configureProject('small', { visitorPaths: 120 });
    const result = await run({ projectId: 'small', ...RANGE, concurrency: 1 });
    assert.equal(result.rows, 120);
    assert.equal(result.pages, 1);
    assert.deepEqual(
      visitorRequests('small').map((r) => r.query),
      [{ ...RANGE, limit: '250', offset: '0' }],
    );
    const out = await readExport(result);
    assert.equal(csvPaths(out.content).length, 120);
    assert.equal(out.manifest.sha256, out.sha256);
  });

  test('date-times without an offset: sent to the service as given (read as UTC), the export completes', async () => {
    stack.sim.configureProject('no-offset', { visitorPaths: 40 });
    const range = { dateFrom: '2026-11-01T06:00:00', dateTo: '2026-11-02T06:30:00.5' };
    const result = await run({ projectId: 'no-offset', ...range, concurrency: 1 });
    assert.deepEqual({ dateFrom: result.dateFrom, dateTo: result.dateTo }, range);
    assert.equal(result.rows, 40);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(
      visitorRequests('no-offset').map((r) => ({ status: r.status, query: r.query })),
      [{ status: 200, query: { ...range, limit: '250', offset: '0' } }],
    );
    // ':' has no place in a folder name: the export is filed under the dates with '-' for ':'.
    assert.deepEqual(await fs.readdir(path.join(stack.exportDir, 'no-offset')), [
      '2026-11-01T06-00-00_2026-11-02T06-30-00.5',
    ]);
    const out = await readExport(result);
    assert.equal(csvPaths(out.content).length, 40);
    assert.deepEqual(out.manifest.range, { ...range, dateToExclusive: true });
    assert.deepEqual(await stagingLeft(), []);
  });

  test('an exact multiple of pageSize: the last full page says hasMore false, nothing is lost', async () => {
    stack.sim.configureProject('exact', { visitorPaths: 500 });
    const result = await run({ projectId: 'exact', ...RANGE, concurrency: 2, format: 'ndjson' });
    assert.equal(result.rows, 500);
    assert.equal(result.pages, 2);
    const offsets = pageRequests('exact').map((r) => Number(r.query.offset));
    // Pages 250 and 500 may be in flight together (slow start): either may reach the service first.
    assert.deepEqual([...offsets].sort((a, b) => a - b).slice(0, 2), [0, 250]);
    assert.ok(offsets.length <= 3, `at most concurrency - 1 wasted requests, saw ${offsets.join(',')}`);
    const out = await readExport(result, 'ndjson');
    const paths = out.content
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { path: string }).path);
    assert.equal(new Set(paths).size, 500);
  });

  test('10,000 rows at concurrency 8: rows in order, totals, checksum, manifest, final progress', async () => {
    stack.sim.configureProject('big', { visitorPaths: 10_000 });
    const handle = await start({ projectId: 'big', ...RANGE, concurrency: 8 });
    const result = await handle.result();
    assert.equal(result.rows, 10_000);
    assert.equal(result.pages, 40);
    assert.deepEqual(result.warnings, []);
    const out = await readExport(result);
    const paths = csvPaths(out.content);
    assert.equal(paths.length, 10_000);
    assert.equal(new Set(paths).size, 10_000);
    assert.deepEqual(paths, [...paths].sort(), 'rows in offset order (the simulator sorts by path)');
    assert.equal(out.manifest.sha256, out.sha256);
    assert.equal(out.manifest.rows, 10_000);
    assert.equal(out.manifest.pages, 40);
    assert.equal(out.manifest.workflowId, handle.workflowId);
    assert.deepEqual(out.manifest.range, { ...RANGE, dateToExclusive: true });
    assert.deepEqual(out.totals, result.totals);
    assert.ok(result.totals.total >= Math.max(result.totals.human, result.totals.ai));
    assert.deepEqual(await handle.query(getProgressQuery), {
      pagesDone: 40,
      rowsDone: 10_000,
      inFlight: 0,
      done: true,
      destination: stack.exportDir,
    });
    const offsets = pageRequests('big').map((r) => Number(r.query.offset));
    assert.equal(new Set(offsets.filter((o) => o < 10_000)).size, 40);
    assert.equal(offsets.filter((o) => o < 10_000).length, 40, 'no page fetched twice');
    assert.ok(offsets.filter((o) => o >= 10_000).length <= 7, 'at most concurrency - 1 pages past the end');
    assert.deepEqual(await stagingLeft(), []);
    // The permits left over go back beside the merge: the task that schedules the merge is not held for them.
    const tasks = schedulingTasks(await handle.fetchHistory());
    assert.equal(tasks.get('releaseBudgetPermits')?.length, 1, 'one give-back, an activity');
    assert.deepEqual(tasks.get('releaseBudgetPermits'), tasks.get('mergeVisitorsExport'));
  });

  // Before the tests that inject 429s: a refusal makes the organization's limiter cautious for a window (an hour
  // with the test worker's budget), and a cautious budget keeps the page window narrow.
  test('100,000 paths: every run stays under 2,000 events and 2 MB of history; no row enters history', async (t) => {
    stack.sim.configureProject('huge', { visitorPaths: 100_000 });
    const limiter = stack.env.client.workflow.getHandle(
      budgetLimiterWorkflowId('analytics', new ApiKey(stack.sim.apiKey).fingerprint()),
    );
    const grantedBefore = (await limiter.query(getBudgetStateQuery)).granted;
    const startedAt = Date.now();
    const handle = await start({ projectId: 'huge', ...RANGE });
    const result = await handle.result();
    const seconds = (Date.now() - startedAt) / 1000;
    assert.equal(result.rows, 100_000);
    assert.equal(result.pages, 400);
    const out = await readExport(result);
    assert.equal(out.manifest.sha256, out.sha256);

    const runs = await historySizes(handle.workflowId);
    for (const run of runs) {
      t.diagnostic(`run ${run.runId}: ${run.events} events, ${run.bytes} bytes`);
      assert.ok(run.events > 0 && run.events < 2000, `a run has ${run.events} events`);
      assert.ok(run.bytes > 0 && run.bytes < 2 * 1024 * 1024, `a run's history is ${run.bytes} bytes`);
      assert.ok(!run.json.includes('/guides/page-'), 'rows must not flow through history');
    }
    // The test worker's budget is far above the need: pages come in runs of one activity each, `concurrency`
    // (default 4) in flight, paid for by batches of permits asked for ahead; what is left goes back.
    const requests = visitorRequests('huge').length;
    const pages = pageRequests('huge').length;
    assert.ok(pages <= 400 + 3, `${pages} page requests: at most concurrency - 1 past the end`);
    const count = (name: string) =>
      runs.reduce((sum, run) => sum + run.json.split(`"${name}"`).length - 1, 0);
    const grants = count('budgetPermitGranted');
    assert.ok(grants > 0 && grants <= 400 / 8, `${grants} grants for 400 pages`);
    const pageRuns = count('fetchVisitorsPages');
    assert.ok(pageRuns >= 2 && pageRuns <= 60, `${pageRuns} runs of pages for 400 pages`);
    // The stock's unspent permits went back; those of the runs past the end (at most concurrency - 1, cancelled
    // when the last page came back, of at most 64 pages each) stay counted: a request may have gone with each.
    const spent = (await limiter.query(getBudgetStateQuery)).granted - grantedBefore;
    assert.ok(
      spent >= requests && spent <= requests + 3 * 64,
      `${spent} permits kept for ${requests} requests: the unspent ones went back to the budget`,
    );
    // The stock's asks are activities scheduled beside a run of pages: the task that schedules the run is not held.
    let stockAsks = 0;
    for (const { runId } of runs) {
      const tasks = schedulingTasks(
        await stack.env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory(),
      );
      const runTasks = new Set(tasks.get('fetchVisitorsPages'));
      const asks = tasks.get('requestBudgetPermit') ?? [];
      assert.ok(
        asks.every((task) => runTasks.has(task)),
        'every stock ask is scheduled beside a run',
      );
      stockAsks += asks.length;
    }
    assert.ok(stockAsks > 0, 'the stock was refilled');
    const events = runs.reduce((sum, run) => sum + run.events, 0);
    const bytes = runs.reduce((sum, run) => sum + run.bytes, 0);
    t.diagnostic(
      `100,000 paths in ${seconds} s: ${runs.length} run(s), ${events} events, ${bytes} bytes in all, ` +
        `${requests} requests, ${grants} permit grants, ${pageRuns} runs of pages`,
    );
    assert.ok(bytes < 2 * 1024 * 1024, `all runs together: ${bytes} bytes`);
  });

  test('progress while running: getProgress, current details in the UI, DocsProjectId search attribute', async () => {
    stack.sim.configureProject('watched', { visitorPaths: 2000 });
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'watched', kind: 'latency', latencyMs: 300 });
    const handle = await start({ projectId: 'watched', ...RANGE, pageSize: 100, concurrency: 3 });
    let progress = await handle.query(getProgressQuery);
    while (progress.pagesDone < 3) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      progress = await handle.query(getProgressQuery);
    }
    assert.equal(progress.done, false);
    assert.equal(progress.rowsDone, progress.pagesDone * 100);
    assert.ok(progress.inFlight >= 1 && progress.inFlight <= 3, `inFlight ${progress.inFlight}`);
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(metadata.currentDetails ?? '', /watched · 2026-11-01 → 2026-11-02/);
    assert.match(
      metadata.currentDetails ?? '',
      /\*\*Pages done:\*\* \d+ · \*\*Rows:\*\* \d+ · \*\*In flight:\*\* \d/,
    );
    const found: string[] = [];
    for (let tries = 0; found.length === 0 && tries < 50; tries++) {
      for await (const wf of stack.env.client.workflow.list({ query: `DocsProjectId = 'watched'` })) {
        found.push(wf.workflowId);
      }
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(found, [handle.workflowId]);
    const result = await handle.result();
    assert.equal(result.rows, 2000);
    const done = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(
      done.currentDetails ?? '',
      /Pages done:\*\* 20 · \*\*Rows:\*\* 2000 · \*\*In flight:\*\* 0 · \*\*Done/,
    );
  });

  // The first test with a 429: the wide run it narrows to a page per activity is this test's subject.
  test('a wide run narrowed by a 429 still continues as new at its event limit, nothing lost', async () => {
    stack.sim.configureProject('narrowed', { visitorPaths: 1500 });
    const limit = 100;
    const handle = await start({
      projectId: 'narrowed',
      ...RANGE,
      pageSize: 10,
      concurrency: 4,
      continueAsNewAfterEvents: limit,
    });
    while (visitorRequests('narrowed').length < 20) await new Promise((resolve) => setTimeout(resolve, 20));
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'narrowed', kind: 'rateLimit', times: 1 });
    const result = await handle.result();
    assert.equal(result.rows, 1500);
    assert.equal(new Set(csvPaths((await readExport(result)).content)).size, 1500);
    assert.equal(pageRequests('narrowed').filter((r) => r.status === 429).length, 1);
    const runs = await historySizes(handle.workflowId);
    // The check comes before each activity but the one that reports a 429: a run ends within two activities'
    // events of the limit (about 15 each; the last run also holds the end check and the merge).
    const sizes = runs.map((r) => r.events);
    assert.ok(
      sizes.every((events) => events <= limit + 60),
      `runs of ${sizes.join(', ')} events`,
    );
  });

  test('5xx and 429 during the export: retried, nothing lost, no page fetched twice after success', async () => {
    stack.sim.configureProject('flaky', { visitorPaths: 1000 });
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'flaky', kind: 'status', status: 502, times: 3 });
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'flaky', kind: 'status', status: 503, times: 1 });
    stack.sim.faults.add({
      route: 'getVisitors',
      projectId: 'flaky',
      kind: 'rateLimit',
      retryAfter: { seconds: 1 },
      times: 2,
    });
    const result = await run({ projectId: 'flaky', ...RANGE, pageSize: 100, concurrency: 4 });
    assert.equal(result.rows, 1000);
    assert.deepEqual(result.warnings, []);
    const out = await readExport(result);
    assert.equal(new Set(csvPaths(out.content)).size, 1000);
    const requests = pageRequests('flaky');
    const statuses = requests.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 502).length, 3);
    assert.equal(statuses.filter((s) => s === 503).length, 1);
    assert.equal(statuses.filter((s) => s === 429).length, 2);
    const succeeded = requests.filter((r) => r.status === 200).map((r) => Number(r.query.offset));
    assert.equal(succeeded.filter((o) => o < 1000).length, 10, 'each page succeeded exactly once');
  });

  test('Retry-After is honoured: the retry of a 429 waits the given seconds, not the 1 s backoff', async () => {
    stack.sim.configureProject('patient', { visitorPaths: 50 });
    stack.sim.faults.add({
      route: 'getVisitors',
      projectId: 'patient',
      kind: 'rateLimit',
      retryAfter: { seconds: 3 },
      times: 1,
    });
    const result = await run({ projectId: 'patient', ...RANGE, concurrency: 1 });
    assert.equal(result.rows, 50);
    const [limited, retried] = visitorRequests('patient');
    assert.equal(limited?.status, 429);
    assert.equal(retried?.status, 200);
    const waited = (retried?.at ?? 0) - (limited?.at ?? 0);
    assert.ok(waited >= 2900, `retried after ${waited} ms`);
  });

  test('a 4xx ends the export with a clear, typed failure and removes its staged pages', async () => {
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'denied', kind: 'status', status: 403 });
    await assert.rejects(run({ projectId: 'denied', ...RANGE }), (error: unknown) => {
      assert.ok(error instanceof WorkflowFailedError);
      assert.ok(error.cause instanceof ApplicationFailure);
      assert.equal(error.cause.type, 'VisitorsExportPageFailed');
      assert.equal(error.cause.nonRetryable, true);
      assert.match(error.cause.message, /visitors page at offset 0 failed: .*HTTP 403/);
      assert.ok(error.cause.cause instanceof ApplicationFailure);
      assert.equal(error.cause.cause.type, 'AuthError');
      return true;
    });
    const statuses = visitorRequests('denied').map((r) => r.status);
    assert.ok(statuses.length <= 4 && statuses.every((s) => s === 403), 'no 4xx is retried');
    assert.deepEqual(await stagingLeft(), []);
    await assert.rejects(fs.access(path.join(stack.exportDir, 'denied')), 'no export directory');
  });

  const badInputs: [string, Record<string, unknown>, RegExp][] = [
    ['missing projectId', { ...RANGE }, /projectId: is required/],
    ['projectId with /', { projectId: 'a/b', ...RANGE }, /projectId: must start with a letter or digit/],
    [
      'inverted dates',
      { projectId: 'p', dateFrom: '2026-11-02', dateTo: '2026-11-01' },
      /dateTo: must be after dateFrom/,
    ],
    ['same dates', { projectId: 'p', dateFrom: '2026-11-02', dateTo: '2026-11-02' }, /dateTo: must be after/],
    [
      'invalid date',
      { projectId: 'p', dateFrom: '2026-02-30', dateTo: '2026-03-01' },
      /dateFrom: must be YYYY-MM-DD/,
    ],
    ['only dateFrom', { projectId: 'p', dateFrom: '2026-11-01' }, /dateTo: is required/],
    ['pageSize 251', { projectId: 'p', ...RANGE, pageSize: 251 }, /pageSize: must be at most 250/],
    ['pageSize 0', { projectId: 'p', ...RANGE, pageSize: 0 }, /pageSize: must be at least 1/],
    ['pageSize 2.5', { projectId: 'p', ...RANGE, pageSize: 2.5 }, /pageSize: must be an integer/],
    ['concurrency 17', { projectId: 'p', ...RANGE, concurrency: 17 }, /concurrency: must be at most 16/],
    ['concurrency 0', { projectId: 'p', ...RANGE, concurrency: 0 }, /concurrency: must be at least 1/],
    [
      'format xml',
      { projectId: 'p', ...RANGE, format: 'xml' },
      /format: must be one of csv, ndjson, json, parquet/,
    ],
    [
      'unknown time zone',
      { projectId: 'p', timeZone: 'Mars/Olympus' },
      /timeZone: must be an IANA time zone/,
    ],
    ['no dates', { projectId: 'p' }, /dateFrom: is required; dateTo: is required/],
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
      assert.equal(stack.sim.requests().length, 0, 'no request reaches the service');
    });
  }

  test('re-running a range replaces the export whole, also in another format', async () => {
    stack.sim.configureProject('rerun', { visitorPaths: 300 });
    const first = await run({ projectId: 'rerun', ...RANGE, format: 'json' });
    assert.equal((await readExport(first, 'json')).manifest.rows, 300);
    stack.sim.configureProject('rerun', { visitorPaths: 50 });
    const second = await run({ projectId: 'rerun', ...RANGE, format: 'csv' });
    const out = await readExport(second);
    assert.equal(csvPaths(out.content).length, 50);
    assert.equal(out.manifest.rows, 50);
    assert.equal(out.manifest.sha256, out.sha256);
    assert.deepEqual((await fs.readdir(out.dir)).sort(), ['manifest.json', 'totals.json', 'visitors.csv']);
    assert.deepEqual(await stagingLeft(), []);
  });

  test('continue-as-new mid-export: counts carried over, the file whole, no page fetched twice', async () => {
    stack.sim.configureProject('carried', { visitorPaths: 5000 });
    const handle = await start({
      projectId: 'carried',
      ...RANGE,
      pageSize: 50,
      concurrency: 3,
      continueAsNewAfterEvents: 100,
    });
    const result = await handle.result();
    assert.equal(result.rows, 5000);
    assert.equal(result.pages, 100);
    assert.deepEqual(result.warnings, []);
    const runs = await historySizes(handle.workflowId);
    assert.ok(runs.length >= 4, `continued as new ${runs.length - 1} times`);
    const out = await readExport(result);
    assert.equal(out.manifest.sha256, out.sha256);
    const paths = csvPaths(out.content);
    assert.equal(new Set(paths).size, 5000);
    assert.deepEqual(paths, [...paths].sort());
    const needed = pageRequests('carried')
      .map((r) => Number(r.query.offset))
      .filter((o) => o < 5000);
    assert.equal(needed.length, 100, 'each page fetched once across all runs');
    assert.deepEqual(await handle.query(getProgressQuery), {
      pagesDone: 100,
      rowsDone: 5000,
      inFlight: 0,
      done: true,
      destination: stack.exportDir,
    });
    assert.deepEqual(await stagingLeft(), []);
    for (const run of runs) {
      const history = await stack.env.client.workflow.getHandle(handle.workflowId, run.runId).fetchHistory();
      await Worker.runReplayHistory(await replayOptions(), history, run.runId);
    }
  });
});
