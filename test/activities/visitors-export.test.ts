import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createVisitorsExportActivities,
  type MergeRequest,
  type MergeResult,
} from '../../src/activities/visitors-export';
import type { PageRunResult } from '../../src/activities/visitors-pages';
import type { PageSummary } from '../../src/contract/visitors-export';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import { DocsApiClient } from '../../src/docs-api/client';
import type { FinalObjectWriter } from '../../src/exports/destination';
import { stagedChunkName } from '../../src/exports/layout';
import { LocalDestination } from '../../src/exports/local-destination';
import { chunkText } from '../../src/exports/destination';
import { stagingDirectory } from '../helpers/export-paths';
import { startSimulator, type Simulator } from '../../dev/simulator';

let sim: Simulator;
let docsApi: DocsApiClient;
let exportDir: string;
let activities: ReturnType<typeof createVisitorsExportActivities>;

before(async () => {
  sim = await startSimulator({ analytics: { paths: 25 } });
  docsApi = new DocsApiClient({ baseUrl: sim.url, apiKey: sim.apiKey });
});
beforeEach(async () => {
  exportDir = await fs.mkdtemp(path.join(os.tmpdir(), 'export-activities-'));
  activities = createVisitorsExportActivities({ docsApi, exportDir });
});
afterEach(async () => {
  sim.reset();
  await fs.rm(exportDir, { recursive: true, force: true });
});
after(async () => {
  await docsApi.close();
  await sim.close();
});

const range = { projectId: 'acme', dateFrom: '2026-11-01', dateTo: '2026-11-02' };

/** Stages `pages` pages as one page run would, each in a chunk of its own (a permit per page). */
async function stagePages(exportKey: string, pageSize: number, pages: number): Promise<PageSummary[]> {
  await new MockActivityEnvironment().run(activities.prepareVisitorsExportStaging, exportKey);
  const summaries: PageSummary[] = [];
  for (let page = 0; page < pages; page++) {
    const offset = page * pageSize;
    const run: PageRunResult = await new MockActivityEnvironment().run(activities.fetchVisitorsPages, {
      exportKey,
      ...range,
      offset,
      limit: pageSize,
      permits: [{ count: 1, grantedAt: Date.now(), spendBy: Date.now() + 60_000 }],
      attempt: 1,
    });
    summaries.push(...run.pages);
  }
  return summaries;
}

/** The one-page chunk of the page at `offset`, as stagePages wrote it. */
const chunkPath = (exportKey: string, offset: number): string =>
  path.join(
    stagingDirectory(exportDir, exportKey),
    stagedChunkName({ runOffset: offset, attempt: 1, firstOffset: offset, pages: 1 }),
  );

/** Stages one page's rows as they are, bypassing the service. */
async function writePage(exportKey: string, offset: number, rows: unknown[]): Promise<void> {
  await fs.mkdir(stagingDirectory(exportDir, exportKey), { recursive: true });
  await fs.writeFile(chunkPath(exportKey, offset), chunkText([{ offset, rows: rows as never[] }]));
}

function mergeRequest(
  exportKey: string,
  summaries: PageSummary[],
  pageSize: number,
  format: MergeRequest['format'],
): MergeRequest {
  return {
    exportKey,
    ...range,
    pageSize,
    pages: summaries.length,
    expectedRows: summaries.reduce((sum, s) => sum + s.rows, 0),
    totals: summaries[0]?.totals ?? { human: 0, ai: 0, total: 0 },
    format,
    warnings: [],
    workflowId: 'wf-1',
    runId: 'run-1',
  };
}

function merge(request: MergeRequest): Promise<MergeResult> {
  return new MockActivityEnvironment().run(activities.mergeVisitorsExport, request);
}

async function readManifest(result: MergeResult): Promise<VisitorsExportManifest> {
  return JSON.parse(await fs.readFile(result.files[2] ?? '', 'utf8')) as VisitorsExportManifest;
}

function pathsOf(content: string, format: MergeRequest['format']): string[] {
  if (format === 'json') return (JSON.parse(content) as { path: string }[]).map((row) => row.path);
  const lines = content.trim().split('\n');
  if (format === 'csv') return lines.slice(1).map((line) => line.split(',')[0] ?? '');
  return lines.map((line) => (JSON.parse(line) as { path: string }).path);
}

describe('mergeVisitorsExport', () => {
  for (const format of ['csv', 'ndjson', 'json'] as const) {
    test(`writes ${format} in offset order with totals.json and a manifest whose sha256 matches`, async () => {
      const summaries = await stagePages(`k-${format}`, 10, 3);
      const result = await merge(mergeRequest(`k-${format}`, summaries, 10, format));
      assert.equal(result.rows, 25);
      assert.deepEqual(result.warnings, []);
      const [file, totalsFile] = result.files as [string, string, string];
      assert.equal(file, path.join(exportDir, 'acme', '2026-11-01_2026-11-02', `visitors.${format}`));
      const content = await fs.readFile(file, 'utf8');
      assert.equal(createHash('sha256').update(content).digest('hex'), result.sha256);
      const manifest = await readManifest(result);
      assert.equal(manifest.sha256, result.sha256);
      assert.equal(manifest.rows, 25);
      assert.equal(manifest.pages, 3);
      assert.equal(manifest.file, `visitors.${format}`);
      assert.deepEqual(manifest.range, { ...pick(range, 'dateFrom', 'dateTo'), dateToExclusive: true });
      assert.equal(manifest.workflowId, 'wf-1');
      assert.ok(!Number.isNaN(Date.parse(manifest.generatedAt)));
      assert.deepEqual(JSON.parse(await fs.readFile(totalsFile, 'utf8')), summaries[0]?.totals);
      const paths = pathsOf(content, format);
      assert.equal(paths.length, 25);
      assert.deepEqual(paths, [...paths].sort(), 'rows in offset order');
      assert.deepEqual(
        (await fs.readdir(path.dirname(file))).sort(),
        ['manifest.json', 'totals.json', `visitors.${format}`],
        'no temporary file is left',
      );
    });
  }

  test('a path seen twice is kept once (first occurrence) and reported; rows are counted against pages', async () => {
    const summaries = await stagePages('dup', 10, 3);
    const firstRow = (await fs.readFile(chunkPath('dup', 0), 'utf8')).split('\n')[1] ?? '';
    const second = await fs.readFile(chunkPath('dup', 10), 'utf8');
    const [header = '', ...rows] = second.split('\n');
    const counted = header.replace(/,(\d+)\]\]/, (_, n: string) => `,${Number(n) + 1}]]`);
    await fs.writeFile(chunkPath('dup', 10), [counted, ...rows.filter(Boolean), firstRow, ''].join('\n'));
    const result = await merge({
      ...mergeRequest('dup', summaries, 10, 'csv'),
      warnings: ['from the pages'],
    });
    assert.equal(result.rows, 25);
    assert.equal(result.duplicateCount, 1);
    const warnings = result.warnings.join('\n');
    assert.match(warnings, /row count mismatch: pages reported 25 rows, staged files hold 26/);
    assert.match(warnings, /1 row\(s\) repeated a path already seen \(first occurrence kept\): \/\w+\/page-/);
    assert.deepEqual((await readManifest(result)).warnings, ['from the pages', ...result.warnings]);
  });

  test('a CSV field with a comma or a quote is quoted (RFC 4180)', async () => {
    await writePage('q', 0, [{ path: '/a,"b"', human: 1, ai: 0, total: 1 }]);
    const result = await merge({ ...mergeRequest('q', [], 10, 'csv'), pages: 1, expectedRows: 1 });
    assert.equal(await fs.readFile(result.files[0] ?? '', 'utf8'), 'path,human,ai,total\n"/a,""b""",1,0,1\n');
  });

  test('0 rows: csv has its header, json an empty array, ndjson nothing', async () => {
    for (const [format, expected] of [
      ['csv', 'path,human,ai,total\n'],
      ['json', '[\n]\n'],
      ['ndjson', ''],
    ] as const) {
      await writePage(`e-${format}`, 0, []);
      const result = await merge({ ...mergeRequest(`e-${format}`, [], 250, format), pages: 1 });
      assert.equal(await fs.readFile(result.files[0] ?? '', 'utf8'), expected);
    }
  });

  test('a missing staged page fails non-retryably, naming the shared-volume requirement', async () => {
    const summaries = await stagePages('gone', 10, 2);
    await fs.rm(chunkPath('gone', 10));
    await assert.rejects(merge(mergeRequest('gone', summaries, 10, 'csv')), (error: unknown) => {
      assert.ok(error instanceof ApplicationFailure);
      assert.equal(error.type, 'ExportStagingMissing');
      assert.equal(error.nonRetryable, true);
      assert.match(
        error.message,
        /offsets 10.*must see the same EXPORT_DIR \(one shared volume, or one bucket\)/,
      );
      return true;
    });
    await assert.rejects(fs.access(path.join(exportDir, 'acme')), 'nothing is written');
  });

  test('a merge redone after it succeeded (lost completion) gives the same file; a new format replaces the old', async () => {
    const summaries = await stagePages('redo', 10, 3);
    const first = await merge(mergeRequest('redo', summaries, 10, 'json'));
    const again = await merge(mergeRequest('redo', summaries, 10, 'json'));
    assert.equal(again.sha256, first.sha256);
    await merge(mergeRequest('redo', summaries, 10, 'csv'));
    assert.deepEqual((await fs.readdir(path.dirname(first.files[0] ?? ''))).sort(), [
      'manifest.json',
      'totals.json',
      'visitors.csv',
    ]);
  });

  test('a re-export in another format failing at any step leaves no manifest, or one whose files hold its rows', async (t) => {
    const summaries = await stagePages('steps', 10, 3);
    const inject = (method: 'removeFinal' | 'writeFinal' | 'openFinal', name: string) => {
      const original = LocalDestination.prototype[method] as (
        key: string,
        ...rest: unknown[]
      ) => Promise<unknown>;
      return t.mock.method(
        LocalDestination.prototype,
        method,
        async function (this: LocalDestination, key: string, ...rest: unknown[]) {
          if (!key.endsWith(`/${name}`)) return original.call(this, key, ...rest);
          if (method !== 'openFinal') throw new Error(`injected: ${method} ${name}`);
          const file = (await original.call(this, key, ...rest)) as FinalObjectWriter;
          return { ...file, commit: () => Promise.reject(new Error(`injected: commit ${name}`)) };
        },
      );
    };
    const steps = [
      ['removeFinal', 'manifest.json'],
      ['removeFinal', 'visitors.csv'],
      ['openFinal', 'visitors.ndjson'],
      ['writeFinal', 'totals.json'],
      ['writeFinal', 'manifest.json'],
    ] as const;
    const missed: string[] = [];
    for (const [method, name] of steps) {
      const step = `${method} ${name}`;
      const csv = await merge(mergeRequest('steps', summaries, 10, 'csv'));
      const folder = path.dirname(csv.files[0] ?? '');
      const fault = inject(method, name);
      const failed = await merge(mergeRequest('steps', summaries, 10, 'ndjson')).then(
        () => false,
        (error: unknown) => error instanceof Error && error.message.startsWith('injected'),
      );
      fault.mock.restore();
      if (!failed) missed.push(step);
      const manifest = await fs.readFile(path.join(folder, 'manifest.json'), 'utf8').catch(() => undefined);
      if (manifest === undefined) continue;
      const { files, file, format, rows } = JSON.parse(manifest) as VisitorsExportManifest;
      for (const entry of files) {
        const bytes = await fs.readFile(path.join(folder, entry.name));
        assert.equal(
          createHash('sha256').update(bytes).digest('hex'),
          entry.sha256,
          `${step}: ${entry.name}`,
        );
      }
      const content = await fs.readFile(path.join(folder, file), 'utf8');
      assert.equal(pathsOf(content, format).length, rows, `${step}: the rows of ${file}`);
    }
    assert.deepEqual(missed, [], 'every step was taken, and failed');
    const ndjson = await merge(mergeRequest('steps', summaries, 10, 'ndjson'));
    assert.equal((await readManifest(ndjson)).file, 'visitors.ndjson');
    assert.deepEqual((await fs.readdir(path.dirname(ndjson.files[0] ?? ''))).sort(), [
      'manifest.json',
      'totals.json',
      'visitors.ndjson',
    ]);
  });

  test('date-times make file-system-safe directory names that keep offsets apart', async () => {
    const at = (dateFrom: string, dateTo: string) => ({
      ...mergeRequest('dt', [], 10, 'csv'),
      dateFrom,
      dateTo,
    });
    await writePage('dt', 0, []);
    const plus = await merge({ ...at('2026-11-01T00:00:00+02:00', '2026-11-02T00:00:00+02:00'), pages: 1 });
    const minus = await merge({ ...at('2026-11-01T00:00:00-02:00', '2026-11-02T00:00:00-02:00'), pages: 1 });
    assert.equal(
      path.basename(path.dirname(plus.files[0] ?? '')),
      '2026-11-01T00-00-00+02-00_2026-11-02T00-00-00+02-00',
    );
    assert.notEqual(path.dirname(plus.files[0] ?? ''), path.dirname(minus.files[0] ?? ''));
  });
});

describe('removeVisitorsExportStaging', () => {
  test('removes the export staging area (idempotent) and staging areas untouched for over a week', async () => {
    await stagePages('done', 10, 1);
    await stagePages('abandoned', 10, 1);
    await stagePages('recent', 10, 1);
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    // Abandoned: nothing written in it, marker or pages, for over a week.
    const abandoned = stagingDirectory(exportDir, 'abandoned');
    for (const name of await fs.readdir(abandoned)) {
      await fs.utimes(path.join(abandoned, name), eightDaysAgo, eightDaysAgo);
    }
    const env = new MockActivityEnvironment();
    await env.run(activities.removeVisitorsExportStaging, 'done');
    await env.run(activities.removeVisitorsExportStaging, 'done');
    assert.deepEqual(await fs.readdir(path.join(exportDir, '.staging')), ['recent']);
  });
});

function pick<T extends object, K extends keyof T>(value: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, value[key]])) as Pick<T, K>;
}
