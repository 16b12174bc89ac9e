import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createVisitorsExportActivities,
  type MergeRequest,
  type MergeResult,
  type PageSummary,
} from '../../src/activities/visitors-export';
import { DocsApiClient } from '../../src/docs-api/client';
import { stagedPagePath } from '../../src/exports/layout';
import { startSimulator, type Simulator } from '../../src/simulator';

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
after(async () => {
  await docsApi.close();
  await sim.close();
});

const range = { projectId: 'acme', dateFrom: '2026-11-01', dateTo: '2026-11-02' };

async function stagePages(exportKey: string, pageSize: number, pages: number): Promise<PageSummary[]> {
  const env = new MockActivityEnvironment();
  const summaries: PageSummary[] = [];
  for (let page = 0; page < pages; page++) {
    summaries.push(
      await env.run(activities.fetchVisitorsPage, {
        exportKey,
        ...range,
        offset: page * pageSize,
        limit: pageSize,
      }),
    );
  }
  return summaries;
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
    workflowId: 'wf-1',
    runId: 'run-1',
  };
}

describe('visitors export activities', () => {
  test('a page stages its rows on disk and returns counts only', async () => {
    const [summary] = await stagePages('k1', 10, 1);
    assert.deepEqual(Object.keys(summary ?? {}).sort(), ['hasMore', 'offset', 'rows', 'totals']);
    assert.equal(summary?.rows, 10);
    const staged = await fs.readFile(stagedPagePath(exportDir, 'k1', 0), 'utf8');
    assert.equal(staged.trim().split('\n').length, 10);
  });

  for (const format of ['csv', 'ndjson', 'json'] as const) {
    test(`merge writes ${format} in offset order with totals and a manifest whose sha256 matches`, async () => {
      const summaries = await stagePages(`k-${format}`, 10, 3);
      const result: MergeResult = await new MockActivityEnvironment().run(
        activities.mergeVisitorsExport,
        mergeRequest(`k-${format}`, summaries, 10, format),
      );
      assert.equal(result.rows, 25);
      assert.deepEqual(result.warnings, []);
      const [file, totalsFile, manifestFile] = result.files as [string, string, string];
      const content = await fs.readFile(file, 'utf8');
      assert.equal(createHash('sha256').update(content).digest('hex'), result.sha256);
      const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8')) as Record<string, unknown>;
      assert.equal(manifest.sha256, result.sha256);
      assert.equal(manifest.rows, 25);
      assert.deepEqual(JSON.parse(await fs.readFile(totalsFile, 'utf8')), summaries[0]?.totals);
      const paths =
        format === 'csv'
          ? content
              .trim()
              .split('\n')
              .slice(1)
              .map((line) => line.split(',')[0])
          : format === 'ndjson'
            ? content
                .trim()
                .split('\n')
                .map((line) => (JSON.parse(line) as { path: string }).path)
            : (JSON.parse(content) as { path: string }[]).map((row) => row.path);
      assert.deepEqual(paths, [...paths].sort(), 'rows in offset order');
      await assert.rejects(fs.access(path.join(exportDir, '.staging', `k-${format}`)), 'staging removed');
    });
  }

  test('a path seen on two pages is reported once and kept once; a row count mismatch is reported', async () => {
    const summaries = await stagePages('dup', 10, 3);
    const firstRow = (await fs.readFile(stagedPagePath(exportDir, 'dup', 0), 'utf8')).split('\n')[0];
    await fs.appendFile(stagedPagePath(exportDir, 'dup', 10), `${firstRow}\n`);
    const result: MergeResult = await new MockActivityEnvironment().run(
      activities.mergeVisitorsExport,
      mergeRequest('dup', summaries, 10, 'csv'),
    );
    assert.equal(result.rows, 25);
    assert.equal(result.duplicateCount, 1);
    assert.match(
      result.warnings.join('\n'),
      /row count mismatch: pages reported 25 rows, staged files hold 26/,
    );
    assert.match(result.warnings.join('\n'), /1 path\(s\) appeared on more than one page/);
  });

  test('a CSV field with a comma or quote is quoted', async () => {
    await fs.mkdir(path.dirname(stagedPagePath(exportDir, 'q', 0)), { recursive: true });
    await fs.writeFile(
      stagedPagePath(exportDir, 'q', 0),
      `${JSON.stringify({ path: '/a,"b"', human: 1, ai: 0, total: 1 })}\n`,
    );
    const result: MergeResult = await new MockActivityEnvironment().run(activities.mergeVisitorsExport, {
      ...mergeRequest('q', [], 10, 'csv'),
      pages: 1,
      expectedRows: 1,
    });
    assert.equal(await fs.readFile(result.files[0] ?? '', 'utf8'), 'path,human,ai,total\n"/a,""b""",1,0,1\n');
  });
});
