import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { DEFAULT_TASK_QUEUE, visitorsExportWorkflowId } from '../../src/contract/names';
import { visitorsExport } from '../../src/workflows';
import { startWorkerProcess } from '../../dev/worker-process';
import { useProcessStack } from '../helpers/stack';
import { withoutEndCheck } from '../helpers/page-requests';

// The stack's worker process is the one killed mid-export.
/** Heartbeat throttle (250 ms), a page's latency (150 ms) and its staging, with room for a loaded machine. */
const REPORT_LAG_MS = 2_000;
const stack = useProcessStack({ name: 'export-crash', simulator: { analytics: { paths: 20_000 } } });

test('the worker killed with SIGKILL mid-export: a new worker completes it, the file is whole', async () => {
  const { env, sim, exportDir, worker: first } = stack;
  sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 150 });
  const input = {
    projectId: 'crash',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: 100,
    concurrency: 2,
  };
  const handle = await env.client.workflow.start(visitorsExport, {
    taskQueue: DEFAULT_TASK_QUEUE,
    workflowId: visitorsExportWorkflowId(input.projectId, input.dateFrom, input.dateTo),
    args: [input],
  });

  const pages = () => sim.requests().filter((r) => r.route === 'getVisitors').length;
  while (pages() < 60) await new Promise((resolve) => setTimeout(resolve, 50));
  await first.kill('SIGKILL');
  const killedAt = Date.now();
  const fetchedBeforeKill = pages();

  const second = startWorkerProcess({ temporalAddress: env.address, service: sim, exportDir });
  try {
    await second.ready;
    const result = await handle.result();
    assert.equal(result.rows, 20_000);
    assert.equal(result.pages, 200);

    const dir = path.join(exportDir, 'crash', '2026-11-01_2026-11-02');
    const csv = await fs.readFile(path.join(dir, 'visitors.csv'));
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
      sha256: string;
      rows: number;
    };
    assert.equal(manifest.sha256, createHash('sha256').update(csv).digest('hex'));
    assert.equal(csv.toString('utf8').trim().split('\n').length, 20_001);

    const requests = withoutEndCheck(sim.requests().filter((r) => r.route === 'getVisitors'));
    const offsets = requests.map((r) => Number(r.query.offset));
    const distinct = new Set(offsets.filter((o) => o < 20_000));
    assert.equal(distinct.size, 200, 'every page fetched');
    // A page counts as done once a heartbeat reported it (the worker sends one at most every 250 ms): only pages
    // whose first request was in flight or staged in the last moments before the kill may be fetched again.
    const firstAsked = new Map<number, number>();
    const repeated = new Set<number>();
    for (const request of requests) {
      const offset = Number(request.query.offset);
      if (firstAsked.has(offset)) repeated.add(offset);
      else firstAsked.set(offset, request.at);
    }
    console.log(`# ${repeated.size} page(s) fetched again after the kill (concurrency ${input.concurrency})`);
    const early = [...repeated].filter((offset) => (firstAsked.get(offset) ?? 0) < killedAt - REPORT_LAG_MS);
    assert.deepEqual(
      early,
      [],
      `completed pages are not fetched again: ${repeated.size} page(s) repeated after ${fetchedBeforeKill} ` +
        `requests before the kill, of which these were first asked over ${REPORT_LAG_MS} ms before it`,
    );
  } finally {
    await second.kill('SIGTERM');
  }
});
