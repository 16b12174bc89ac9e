import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import type { VisitorsExportInput } from '../../src/contract/visitors-export';
import { DocsApiClient, type RequestOptions, type VisitorsQuery } from '../../src/docs-api/client';
import { docsApiFailure } from '../../src/docs-api/failures';
import { visitorsExport } from '../../src/workflows';
import { startTestWorker } from '../../dev/worker';
import { mountSmallDisk, smallDiskSkipped, type SmallDisk } from '../helpers/small-disk';
import { useStack } from '../helpers/stack';
import { runCli } from '../helpers/cli-process';

// 1,000 paths: 100 pages of 10 rows.
const stack = useStack({ name: 'export-faults', simulator: { analytics: { paths: 1_000 } } });
const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };
const PAGES = 100;
const CONCURRENCY = 4;

/** The CLI as its own process against the test's dev server, on `taskQueue`. */
const cli = (taskQueue: string, ...args: string[]) => runCli(stack.env.address, args, taskQueue);

const exportArgs = (projectId: string) => [
  '--project',
  projectId,
  '--from',
  RANGE.dateFrom,
  '--to',
  RANGE.dateTo,
  '--page-size',
  '10',
  '--concurrency',
  String(CONCURRENCY),
];

/** The offsets the simulator was asked for, for a project, in order. */
const requestedOffsets = (projectId: string): number[] =>
  stack.sim
    .requests()
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId)
    .map((r) => Number(r.query.offset));

/** A worker of its own exporting to a small disk, for the duration of `work`. */
async function onSmallDisk(taskQueue: string, work: (disk: SmallDisk) => Promise<void>): Promise<void> {
  const disk = await mountSmallDisk(16 * 1024);
  try {
    const worker = await startTestWorker(stack.env, { service: stack.sim, taskQueue, exportDir: disk.dir });
    try {
      await work(disk);
    } finally {
      await worker.stop();
    }
  } finally {
    await disk.unmount();
  }
}

// First: the budget limiter starts on the task queue of the first export that asks it for a permit, and that
// queue's worker must outlive the file (the stack's does; the small disks' workers stop after their test).
describe('malformed answers', () => {
  test('a page answered malformed fails the export at its third answer', { timeout: 60_000 }, async () => {
    stack.sim.faults.add({
      route: 'getVisitors',
      projectId: 'garbled',
      kind: 'malformed',
      malformed: 'html-200',
    });
    await assert.rejects(exportOf({ projectId: 'garbled', ...RANGE }), (error: unknown) => {
      assert.ok(error instanceof WorkflowFailedError);
      assert.ok(error.cause instanceof ApplicationFailure);
      assert.equal(error.cause.type, 'VisitorsExportPageFailed');
      assert.ok(error.cause.cause instanceof ApplicationFailure);
      assert.equal(error.cause.cause.type, 'MalformedResponseError');
      return true;
    });
    assert.deepEqual(requestedOffsets('garbled'), [0, 0, 0]);
  });

  test(
    'a page answered malformed in the middle of a wide run gets three answers too',
    { timeout: 60_000 },
    async () => {
      const garbling = new (class extends DocsApiClient {
        override async getVisitors(projectId: string, query: VisitorsQuery, options?: RequestOptions) {
          const page = await super.getVisitors(projectId, query, options);
          if (query.offset !== 300) return page;
          throw docsApiFailure('malformedResponse', 'hasMore is not a boolean', {
            operation: 'getVisitors',
            status: 200,
            field: 'hasMore',
          });
        }
      })({ baseUrl: stack.sim.url, apiKey: stack.sim.apiKey });
      const worker = await startTestWorker(stack.env, {
        service: stack.sim,
        taskQueue: 'export-garbled-wide',
        extraDeps: { docsApi: garbling },
      });
      try {
        const input = { projectId: 'garbled-wide', ...RANGE, pageSize: 10, concurrency: CONCURRENCY };
        await assert.rejects(exportOf(input, 'export-garbled-wide'), (error: unknown) => {
          assert.ok(error instanceof WorkflowFailedError);
          assert.match(
            error.cause?.message ?? '',
            /^visitors page at offset 300 failed: getVisitors: hasMore is not a boolean/,
          );
          return true;
        });
      } finally {
        await worker.stop();
        await garbling.close();
      }
      const offsets = requestedOffsets('garbled-wide');
      assert.equal(offsets.filter((offset) => offset === 300).length, 3, `requests: ${offsets.join(', ')}`);
    },
  );
});

describe('destination faults another attempt cannot fix', { skip: smallDiskSkipped() }, () => {
  test(
    'a disk that fills while pages are staged: the export fails at once, no page fetched twice, the CLI says ENOSPC',
    { timeout: 120_000 },
    async () => {
      await onSmallDisk('export-full-disk', async (disk) => {
        const started = Date.now();
        const run = await cli('export-full-disk', 'export', 'run', ...exportArgs('full'));
        assert.equal(run.code, 1, run.stdout);
        const rootCause =
          /ExportDestinationUnavailable: visitors page at offset \d+ failed: export directory \S+ cannot be written \(ENOSPC: write \.staging\/\S+\/chunk-/;
        assert.match(run.stdout, new RegExp(`export failed: ${rootCause.source}`));
        assert.ok(Date.now() - started < 30_000, 'failed without retrying the write');
        const offsets = requestedOffsets('full');
        assert.ok(offsets.length > 0, 'pages were fetched before the disk filled');
        assert.equal(new Set(offsets).size, offsets.length, `no page fetched twice: ${offsets.join(', ')}`);
        assert.ok(offsets.length <= PAGES + CONCURRENCY);
        const workflowId = visitorsExportWorkflowId('full', RANGE.dateFrom, RANGE.dateTo);
        const status = await cli('export-full-disk', 'export', 'status', '--workflow-id', workflowId);
        assert.equal(status.code, 1);
        assert.match(status.stdout, new RegExp(`^FAILED: ${rootCause.source}`));
        // A folder lasts only while it holds a file: the staging root goes with the last staged page.
        assert.deepEqual(
          await fs.readdir(path.join(disk.dir, '.staging')).catch(() => []),
          [],
          'the staged pages are removed',
        );

        // Full before the export starts: the probe fails it, before any page.
        await disk.fill();
        const again = await cli('export-full-disk', 'export', 'run', ...exportArgs('full-first'), '--json');
        assert.equal(again.code, 1, again.stdout);
        const failure = JSON.parse(again.stdout) as { type: string; error: string };
        assert.equal(failure.type, 'ExportDestinationUnavailable');
        assert.match(failure.error, /cannot be written \(ENOSPC: write \.probe-/);
        assert.deepEqual(requestedOffsets('full-first'), []);
      });
    },
  );

  test(
    'a read-only disk: the probe fails the export before any page; export status shows EROFS, not "Activity task failed"',
    { timeout: 120_000 },
    async () => {
      await onSmallDisk('export-read-only', async (disk) => {
        await disk.readOnly();
        const run = await cli('export-read-only', 'export', 'run', ...exportArgs('read-only'));
        assert.equal(run.code, 1, run.stdout);
        const rootCause =
          /ExportDestinationUnavailable: export directory \S+ cannot be written \(EROFS: open /;
        assert.match(run.stdout, new RegExp(`export failed: ${rootCause.source}`));
        const workflowId = visitorsExportWorkflowId('read-only', RANGE.dateFrom, RANGE.dateTo);
        const status = await cli('export-read-only', 'export', 'status', '--workflow-id', workflowId);
        assert.match(status.stdout, new RegExp(`^FAILED: ${rootCause.source}`));
        assert.deepEqual(requestedOffsets('read-only'), []);
        await disk.readOnly(false);
      });
    },
  );
});

function exportOf(input: VisitorsExportInput, taskQueue = DEFAULT_TASK_QUEUE) {
  return stack.client.workflow.execute(visitorsExport, {
    taskQueue,
    workflowId: visitorsExportWorkflowId(input.projectId, RANGE.dateFrom, RANGE.dateTo),
    args: [input],
  });
}
