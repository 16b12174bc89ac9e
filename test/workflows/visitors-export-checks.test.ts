import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { getProgressQuery } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type {
  VisitorsExportInput,
  VisitorsExportManifest,
  VisitorsExportResult,
} from '../../src/contract/visitors-export';
import { DocsApiClient, type RequestOptions, type VisitorsQuery } from '../../src/docs-api/client';
import { docsApiFailure } from '../../src/docs-api/failures';
import type { VisitorsPage } from '../../src/contract/visitors-export';
import { visitorsExport } from '../../src/workflows';
import { useStack } from '../helpers/stack';
import { runCli } from '../helpers/cli-process';
import { MAX_SUSPECT_PAGES } from '../../src/workflows/visitors-export/page-checks';

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

function disagreeFailure(error: unknown): ApplicationFailure {
  assert.ok(error instanceof WorkflowFailedError);
  assert.ok(error.cause instanceof ApplicationFailure);
  assert.equal(error.cause.type, 'VisitorsExportPagesDisagree');
  return error.cause;
}

async function assertDisagree(result: Promise<unknown>, offsets: number[]): Promise<void> {
  await assert.rejects(result, (error: unknown) => {
    const failure = disagreeFailure(error);
    assert.match(failure.message, new RegExp(`offset\\(s\\) ${offsets.join(', ')} after 2 re-read`));
    assert.deepEqual((failure.details?.[0] as { offsets: number[] }).offsets, offsets);
    return true;
  });
}

/** A failed export leaves no manifest (no export folder at all) and no staged page. */
async function assertNothingWritten(projectId: string): Promise<void> {
  await assert.rejects(fs.access(path.join(stack.exportDir, projectId)), 'no export was written');
  assert.deepEqual(await stagingLeft(), []);
}

const bumpTotals = (page: VisitorsPage): VisitorsPage => ({
  ...page,
  totals: { ...page.totals, human: page.totals.human + 1, total: page.totals.total + 1 },
});

describe('visitorsExport merge checks', () => {
  test('totals that change on a page and on its re-reads: the export fails naming the offset, no manifest', async () => {
    stack.sim.configureProject('drift', { visitorPaths: 300 });
    docsApi.scripts.set('drift', async (offset, fetch) => {
      const page = await fetch();
      return offset === 100 ? bumpTotals(page) : page;
    });
    await assertDisagree(run({ projectId: 'drift', ...RANGE, pageSize: 100, concurrency: 1 }), [100]);
    // The pages and page 0 again beside the last one (the end check); round 1: the suspect, one past the full last
    // page; round 2: the suspect.
    assert.deepEqual(offsetsRequested('drift'), [0, 100, 200, 0, 100, 300, 100]);
    await assertNothingWritten('drift');
    const status = await runCli(stack.env.address, [
      'export',
      'status',
      '--workflow-id',
      visitorsExportWorkflowId('drift', RANGE.dateFrom, RANGE.dateTo),
    ]);
    assert.equal(status.code, 1);
    assert.match(
      status.stdout,
      /^FAILED: VisitorsExportPagesDisagree: visitors pages disagree at offset\(s\) 100 /,
    );
  });

  test('a page that disagreed once is read again, staged over, and the export completes', async () => {
    stack.sim.configureProject('hollow-once', { visitorPaths: 300 });
    let calls = 0;
    docsApi.scripts.set('hollow-once', async (offset, fetch) => {
      const page = await fetch();
      return offset === 100 && ++calls === 1 ? { ...page, visitors: [], hasMore: true } : page;
    });
    const result = await run({ projectId: 'hollow-once', ...RANGE, pageSize: 100, concurrency: 1 });
    assert.equal(result.rows, 300);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(offsetsRequested('hollow-once'), [0, 100, 200, 0, 100, 300]);
    const out = await exported('hollow-once');
    assert.equal(new Set(out.paths).size, 300);
    assert.equal(out.manifest.rows, 300);
    assert.deepEqual(await stagingLeft(), []);
  });

  test("page 0's first answer alone has other totals: read again, it agrees, and the export completes", async () => {
    // 3 pages (2 suspects, settled by page 0 read again) and 10 pages (9: past MAX_SUSPECT_PAGES while counting).
    for (const [projectId, rows] of [
      ['glitch-short', 300],
      ['glitch-long', 1000],
    ] as const) {
      stack.sim.configureProject(projectId, { visitorPaths: rows });
      let firstRead = true;
      docsApi.scripts.set(projectId, async (offset, fetch) => {
        const page = await fetch();
        if (offset !== 0 || !firstRead) return page;
        firstRead = false;
        return bumpTotals(page);
      });
      const result = await run({ projectId, ...RANGE, pageSize: 100, concurrency: 1 });
      assert.equal(result.rows, rows);
      const offsets = offsetsRequested(projectId);
      const pages = Array.from({ length: rows / 100 }, (_, page) => page * 100);
      // Each page once, page 0 twice, the page past the full last one once: no suspect read again.
      assert.deepEqual(
        [...offsets].sort((a, b) => a - b),
        [0, ...pages, rows],
        `requests: ${offsets.join(', ')}`,
      );
      const out = await exported(projectId);
      assert.equal(new Set(out.paths).size, rows);
      assert.equal(out.manifest.rows, rows);
      // The service's totals, not page 0's first answer.
      const { totals } = await docsApi.getVisitors(projectId, { ...RANGE, offset: 0, limit: 1 });
      assert.deepEqual(result.totals, totals);
      assert.deepEqual(out.totals, totals);
    }
  });

  test('an empty and a short page that say hasMore: fails naming both offsets', async () => {
    stack.sim.configureProject('hollow', { visitorPaths: 500 });
    docsApi.scripts.set('hollow', async (offset, fetch) => {
      const page = await fetch();
      if (offset === 100) return { ...page, visitors: [], hasMore: true };
      return offset === 300 ? { ...page, visitors: page.visitors.slice(0, 90) } : page;
    });
    await assertDisagree(run({ projectId: 'hollow', ...RANGE, pageSize: 100, concurrency: 2 }), [100, 300]);
    const offsets = offsetsRequested('hollow');
    // 500 (past the full last page) is read once, in flight with the pages or by the end check.
    assert.deepEqual(
      offsets.filter((offset) => offset !== 500).slice(-5),
      [0, 100, 300, 100, 300],
      'page 0 beside the last pages, then two rounds of re-reads',
    );
    assert.equal(offsets.filter((offset) => offset === 500).length, 1);
    assert.ok(offsets.length <= 5 + 2 + 6, `pages + concurrency + re-reads: ${offsets.join(', ')}`);
    await assertNothingWritten('hollow');
  });

  test('hasMore false on a full page while the pages past it have rows: fails, within pages + concurrency + re-reads', async () => {
    stack.sim.configureProject('cut', { visitorPaths: 1000 });
    docsApi.scripts.set('cut', async (offset, fetch) => {
      const page = await fetch();
      return offset === 300 ? { ...page, hasMore: false } : page;
    });
    await assert.rejects(
      run({ projectId: 'cut', ...RANGE, pageSize: 100, concurrency: 4 }),
      (error: unknown) => {
        const failure = disagreeFailure(error);
        assert.match(failure.message, /has 100 rows past the end that page 300 announced/);
        return true;
      },
    );
    const offsets = offsetsRequested('cut');
    assert.ok(offsets.length <= 4 + 4 + 2 * (MAX_SUSPECT_PAGES + 2), `requests: ${offsets.join(', ')}`);
    await assertNothingWritten('cut');
  });

  test('rows removed during the export: page 0 read again differs, the export fails', async () => {
    stack.sim.configureProject('gone', { visitorPaths: 1000 });
    docsApi.scripts.set('gone', async (offset, fetch) => {
      if (offset === 500) stack.sim.configureProject('gone', { removedRows: 3 });
      return fetch();
    });
    await assert.rejects(
      run({ projectId: 'gone', ...RANGE, pageSize: 100, concurrency: 1 }),
      (error: unknown) => {
        const failure = disagreeFailure(error);
        assert.match(failure.message, /offset\(s\) 0 .*page 0 read again differs from its first read/);
        return true;
      },
    );
    assert.deepEqual(offsetsRequested('gone'), [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 0, 0]);
    await assertNothingWritten('gone');
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
    // A short last page: no read past it (after a full one, that read is a page the export needs).
    stack.sim.configureProject('tail', { visitorPaths: 90 });
    docsApi.scripts.set('tail', async (offset, fetch) => {
      if (offset >= 100) {
        throw docsApiFailure('unavailable', 'injected', { operation: 'getVisitors', status: 503 });
      }
      return fetch();
    });
    const startedAt = Date.now();
    const result = await run({ projectId: 'tail', ...RANGE, pageSize: 50, concurrency: 4 });
    assert.equal(result.rows, 90);
    assert.equal(result.pages, 2);
    assert.deepEqual(result.warnings, []);
    assert.ok(Date.now() - startedAt < 5000, 'the failing pages past the end were cancelled, not waited for');
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
