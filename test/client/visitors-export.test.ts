import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import {
  getExportProgress,
  runVisitorsExport,
  startVisitorsExport,
  type ManualVisitorsExportInput,
} from '../../src/client/visitors-export';
import { InputValidationError } from '../../src/contract/validation';
import { freePort } from '../../dev/ports';
import { useStack } from '../helpers/stack';

const stack = useStack({ name: 'client-exports' });
afterEach(() => stack.sim.reset());

const RANGE = { dateFrom: '2026-11-01', dateTo: '2026-11-02' };

describe('client: visitors exports', () => {
  test('runVisitorsExport: deterministic workflow id, result, files on disk', async () => {
    stack.sim.configureProject('acme', { visitorPaths: 600 });
    const result = await runVisitorsExport(stack.env.client, {
      projectId: 'acme',
      ...RANGE,
      format: 'ndjson',
    });
    assert.equal(result.rows, 600);
    assert.equal(result.pages, 3);
    const dir = path.join(stack.exportDir, 'acme', '2026-11-01_2026-11-02');
    assert.deepEqual(result.files, [
      path.join(dir, 'visitors.ndjson'),
      path.join(dir, 'totals.json'),
      path.join(dir, 'manifest.json'),
    ]);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
      workflowId: string;
    };
    assert.equal(manifest.workflowId, 'visitors-export/acme/2026-11-01_2026-11-02');
    assert.deepEqual(await getExportProgress(stack.env.client, manifest.workflowId), {
      pagesDone: 3,
      rowsDone: 600,
      inFlight: 0,
      done: true,
      destination: stack.exportDir,
    });
  });

  test('starting a range that is being exported joins the running export; a later start runs it again', async () => {
    stack.sim.configureProject('joined', { visitorPaths: 1000 });
    stack.sim.faults.add({ route: 'getVisitors', projectId: 'joined', kind: 'latency', latencyMs: 200 });
    const input: ManualVisitorsExportInput = { projectId: 'joined', ...RANGE, pageSize: 100, concurrency: 2 };
    const first = await startVisitorsExport(stack.env.client, input);
    const second = await startVisitorsExport(stack.env.client, input);
    const firstRunId = (await first.describe()).runId;
    assert.equal((await second.describe()).runId, firstRunId, 'one export per range at a time');
    let progress = await getExportProgress(stack.env.client, first.workflowId);
    while (progress.pagesDone === 0) {
      await sleep(50);
      progress = await getExportProgress(stack.env.client, first.workflowId);
    }
    assert.equal(progress.done, false);
    assert.equal((await first.result()).rows, 1000);
    const requestsOfOneExport = stack.sim.requests().length;
    // 10 pages, one past the end, and the end check's read of page 0 again.
    assert.ok(requestsOfOneExport <= 12, `one export's requests: ${requestsOfOneExport}`);

    const third = await startVisitorsExport(stack.env.client, input);
    assert.notEqual((await third.describe()).runId, firstRunId, 'a closed range runs again');
    assert.equal((await third.result()).rows, 1000);
  });

  test('the same dates in two zones are two exports: ids, folders, results and requests differ', async () => {
    stack.sim.configureProject('zones', { visitorPaths: 10 });
    const utc = await runVisitorsExport(stack.env.client, { projectId: 'zones', ...RANGE });
    const paris = await runVisitorsExport(stack.env.client, {
      projectId: 'zones',
      ...RANGE,
      timeZone: 'Europe/Paris',
    });
    assert.equal(utc.timeZone, undefined);
    assert.equal(paris.timeZone, 'Europe/Paris');
    assert.deepEqual([paris.dateFrom, paris.dateTo], [RANGE.dateFrom, RANGE.dateTo]);
    assert.deepEqual((await fs.readdir(path.join(stack.exportDir, 'zones'))).sort(), [
      '2026-11-01_2026-11-02',
      '2026-11-01_2026-11-02_Europe-Paris',
    ]);
    const ids = await Promise.all(
      [utc, paris].map(async (result) => {
        const manifest = JSON.parse(await fs.readFile(result.files.at(-1) ?? '', 'utf8')) as {
          workflowId: string;
          range: { timeZone?: string };
        };
        return [manifest.workflowId, manifest.range.timeZone];
      }),
    );
    assert.deepEqual(ids, [
      ['visitors-export/zones/2026-11-01_2026-11-02', undefined],
      ['visitors-export/zones/2026-11-01_2026-11-02_Europe-Paris', 'Europe/Paris'],
    ]);
    const sent = stack.sim
      .requests()
      .filter((r) => r.route === 'getVisitors' && r.projectId === 'zones')
      .map((r) => `${r.query.dateFrom}_${r.query.dateTo}`);
    assert.deepEqual(sent, ['2026-11-01_2026-11-02', '2026-11-01T00:00:00+01:00_2026-11-02T00:00:00+01:00']);
  });

  test('bad input is rejected before Temporal is contacted, every bad field named', async () => {
    const unreachable = new Client({
      connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }),
    });
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { dateFrom: '2026-11-01' },
        /dateTo: is required for an export started by hand; projectId: is required/,
      ],
      [
        { projectId: 'p', ...RANGE, pageSize: 500, concurrency: 0 },
        /pageSize: must be at most 250; concurrency: must be at least 1/,
      ],
      [{ projectId: 'p', dateFrom: RANGE.dateTo, dateTo: RANGE.dateFrom }, /dateTo: must be after dateFrom/],
      [{ projectId: 'p', ...RANGE, format: 'xlsx' }, /format: must be one of csv, ndjson, json, parquet/],
      [
        { projectId: 'p', ...RANGE, continuation: { exportKey: 'x' } },
        /continuation: is set by the workflow itself/,
      ],
    ];
    for (const [input, message] of cases) {
      await assert.rejects(
        startVisitorsExport(unreachable, input as unknown as ManualVisitorsExportInput),
        (error: unknown) => error instanceof InputValidationError && message.test(error.message),
        `rejects ${JSON.stringify(input)} with ${message}`,
      );
    }
    assert.equal(stack.sim.requests().length, 0);
  });
});
