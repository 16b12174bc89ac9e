import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { getProgressQuery } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type {
  VisitorsExportInput,
  VisitorsExportManifest,
  VisitorsExportResult,
} from '../../src/contract/visitors-export';
import type { VisitorsQuery } from '../../src/docs-api/arguments';
import { DocsApiClient, type RequestOptions } from '../../src/docs-api/client';
import { ServerError } from '../../src/docs-api/errors';
import type { VisitorsPage } from '../../src/contract/visitors-export';
import { visitorsExport } from '../../src/workflows';
import { useStack } from '../helpers/stack';

/** Alters the simulator's answers per project, to produce what a faithful server rarely does on cue. */
type PageScript = (
  offset: number,
  fetch: () => Promise<VisitorsPage>,
  signal?: AbortSignal,
) => Promise<VisitorsPage>;

class ScriptedDocsApi extends DocsApiClient {
  readonly scripts = new Map<string, PageScript>();

  override async getVisitors(
    projectId: string,
    query: VisitorsQuery,
    options: RequestOptions = {},
  ): Promise<VisitorsPage> {
    const fetch = () => super.getVisitors(projectId, query, options);
    const script = this.scripts.get(projectId);
    return script ? script(query.offset ?? 0, fetch, options.signal) : fetch();
  }
}

let docsApi: ScriptedDocsApi;
const stack = useStack({
  name: 'visitors-export-checks',
  worker: (started) => {
    docsApi = new ScriptedDocsApi({ baseUrl: started.url, apiKey: started.apiKey });
    return { extraDeps: { docsApi } };
  },
  // Unset when the stack failed before its worker was configured.
  afterStop: () => docsApi?.close(),
});
afterEach(() => {
  stack.sim.reset();
  docsApi.scripts.clear();
});

const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

function start(input: VisitorsExportInput) {
  return stack.env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(input.projectId, RANGE.dateFrom, RANGE.dateTo),
    args: [input],
  });
}

async function run(input: VisitorsExportInput): Promise<VisitorsExportResult> {
  return (await start(input)).result();
}

async function exported(projectId: string) {
  const dir = path.join(stack.exportDir, projectId, `${RANGE.dateFrom}_${RANGE.dateTo}`);
  const csv = await fs.readFile(path.join(dir, 'visitors.csv'), 'utf8');
  const manifest = JSON.parse(
    await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'),
  ) as VisitorsExportManifest;
  const totals = JSON.parse(await fs.readFile(path.join(dir, 'totals.json'), 'utf8')) as unknown;
  const paths = csv
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0] ?? '');
  return { paths, manifest, totals };
}

function offsetsRequested(projectId: string): number[] {
  return stack.sim
    .requests()
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId)
    .map((r) => Number(r.query.offset));
}

async function stagingLeft(): Promise<string[]> {
  return fs.readdir(path.join(stack.exportDir, '.staging')).catch(() => []);
}

const bumpTotals = (page: VisitorsPage): VisitorsPage => ({
  ...page,
  totals: { ...page.totals, human: page.totals.human + 1, total: page.totals.total + 1 },
});

describe('visitorsExport merge checks', () => {
  test('pages that disagree on totals: a warning, totals.json holds the first page', async () => {
    stack.sim.configureProject('drift', { visitorPaths: 300 });
    docsApi.scripts.set('drift', async (offset, fetch) => {
      const page = await fetch();
      return offset === 100 ? bumpTotals(page) : page;
    });
    const result = await run({ projectId: 'drift', ...RANGE, pageSize: 100, concurrency: 1 });
    assert.equal(result.rows, 300);
    assert.deepEqual(result.warnings, [
      "site-wide totals differed between pages: totals.json holds the first page's",
    ]);
    const out = await exported('drift');
    assert.deepEqual(out.totals, result.totals);
    assert.deepEqual(out.manifest.warnings, result.warnings);
    assert.deepEqual(offsetsRequested('drift'), [0, 100, 200]);
  });

  test('retryOnTotalsMismatch: the whole export runs once more and the result says so', async () => {
    stack.sim.configureProject('redo', { visitorPaths: 300 });
    let calls = 0;
    docsApi.scripts.set('redo', async (offset, fetch) => {
      const page = await fetch();
      return offset === 100 && ++calls === 1 ? bumpTotals(page) : page;
    });
    const result = await run({
      projectId: 'redo',
      ...RANGE,
      pageSize: 100,
      concurrency: 1,
      retryOnTotalsMismatch: true,
    });
    assert.equal(result.rows, 300);
    assert.deepEqual(result.warnings, [
      'pages disagreed on the site-wide totals in the first attempt: the whole export was run again',
    ]);
    assert.deepEqual(offsetsRequested('redo'), [0, 100, 200, 0, 100, 200]);
    const out = await exported('redo');
    assert.equal(new Set(out.paths).size, 300);
    assert.deepEqual(await stagingLeft(), [], 'both attempts cleaned up');
  });

  test('a path on two pages is kept once (first occurrence) and reported', async () => {
    stack.sim.configureProject('twice', { visitorPaths: 300 });
    let firstRow: VisitorsPage['visitors'][number] | undefined;
    docsApi.scripts.set('twice', async (offset, fetch) => {
      const page = await fetch();
      if (offset === 0) firstRow = page.visitors[0];
      if (offset !== 100 || !firstRow) return page;
      return { ...page, visitors: [...page.visitors.slice(0, -1), firstRow] };
    });
    const result = await run({ projectId: 'twice', ...RANGE, pageSize: 100, concurrency: 1 });
    assert.equal(result.rows, 299);
    assert.equal(result.warnings.length, 1);
    assert.match(
      result.warnings[0] ?? '',
      /^1 row\(s\) repeated a path already seen \(first occurrence kept\): /,
    );
    assert.ok(firstRow && result.warnings[0]?.endsWith(firstRow.path));
    const out = await exported('twice');
    assert.equal(out.paths.length, 299);
    assert.equal(out.paths.indexOf(firstRow.path), 0);
    assert.equal(out.manifest.rows, 299);
  });

  test('pages past the end that keep failing neither fail nor delay the export', async () => {
    stack.sim.configureProject('tail', { visitorPaths: 100 });
    docsApi.scripts.set('tail', async (offset, fetch) => {
      if (offset >= 100) {
        throw new ServerError('injected', { operation: 'getVisitors', status: 503, safeToRetry: true });
      }
      return fetch();
    });
    const startedAt = Date.now();
    const result = await run({ projectId: 'tail', ...RANGE, pageSize: 50, concurrency: 4 });
    assert.equal(result.rows, 100);
    assert.equal(result.pages, 2);
    assert.deepEqual(result.warnings, []);
    assert.ok(Date.now() - startedAt < 5000, 'the failing pages past the end were cancelled, not waited for');
  });

  test('a page that is empty but says hasMore ends the export with a warning', async () => {
    stack.sim.configureProject('hollow', { visitorPaths: 300 });
    docsApi.scripts.set('hollow', async (offset, fetch) => {
      const page = await fetch();
      return offset === 100 ? { ...page, visitors: [], hasMore: true } : page;
    });
    const result = await run({ projectId: 'hollow', ...RANGE, pageSize: 100, concurrency: 2 });
    assert.equal(result.rows, 100);
    assert.equal(result.pages, 2);
    assert.deepEqual(result.warnings, [
      'page at offset 100 was empty but said hasMore: the export stops there',
    ]);
  });

  test('a short page that says hasMore is reported: rows may be missing', async () => {
    stack.sim.configureProject('short', { visitorPaths: 300 });
    docsApi.scripts.set('short', async (offset, fetch) => {
      const page = await fetch();
      return offset === 0 ? { ...page, visitors: page.visitors.slice(0, 90) } : page;
    });
    const result = await run({ projectId: 'short', ...RANGE, pageSize: 100, concurrency: 2 });
    assert.equal(result.rows, 290);
    assert.deepEqual(result.warnings, [
      'page at offset 0 had 90 of 100 rows but said hasMore: rows may be missing',
    ]);
  });

  test('a cancelled export removes its staged pages', async () => {
    stack.sim.configureProject('stopped', { visitorPaths: 2000 });
    docsApi.scripts.set('stopped', async (_offset, fetch, signal) => {
      await sleep(300, undefined, signal ? { signal } : {});
      return fetch();
    });
    const handle = await start({ projectId: 'stopped', ...RANGE, pageSize: 100, concurrency: 2 });
    while ((await handle.query(getProgressQuery)).pagesDone < 2) await sleep(100);
    assert.ok((await stagingLeft()).length === 1, 'pages are staged while the export runs');
    await handle.cancel();
    await assert.rejects(
      handle.result(),
      (error: unknown) => error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure,
    );
    assert.deepEqual(await stagingLeft(), []);
    await assert.rejects(fs.access(path.join(stack.exportDir, 'stopped')), 'no export was written');
  });
});
