import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { createVisitorsSchedule, deleteVisitorsSchedule } from '../../src/client/schedule';
import { describeVisitorsNightly } from '../../src/client/schedule';
import { runVisitorsExport } from '../../src/client/visitors-export';
import { workflowIdPrefix, WorkflowType } from '../../src/contract/names';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import { fireNights, requestedRanges, settledRuns } from '../helpers/nightly';
import { useStack } from '../helpers/stack';

// 30 paths: every export is one page, so each day the service is asked for appears once per export of it.
const stack = useStack({ name: 'nightly-destination', simulator: { analytics: { paths: 30 } } });

const range = (day: string, next: string): string => `${day}_${next}`;

/** Deletes every run of the workflows a query finds, and waits until visibility finds none. */
async function deleteAll(client: Client, query: string): Promise<void> {
  for await (const run of client.workflow.list({ query })) {
    await client.workflowService.deleteWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: run.workflowId, runId: run.runId },
    });
  }
  for (;;) {
    let left = 0;
    for await (const _ of client.workflow.list({ query })) left += 1;
    if (left === 0) return;
    await sleep(200);
  }
}

async function manifestAt(folder: string): Promise<VisitorsExportManifest> {
  const text = await fs.readFile(path.join(stack.exportDir, folder, 'manifest.json'), 'utf8');
  return JSON.parse(text) as VisitorsExportManifest;
}

/**
 * A project whose 11-01 the nightly export wrote, and 11-02 .. 11-06 exported by hand: 11-03 as Parquet (the hive
 * layout), 11-04 only partially, 11-05 whole but its manifest damaged since. Then, if `forget`, every day export
 * is deleted from Temporal (as after the namespace's retention).
 */
async function exportedThenDamaged(client: Client, projectId: string, forget: boolean): Promise<void> {
  await createVisitorsSchedule(client, { projectId, at: '02:00', timeZone: 'UTC' });
  await fireNights(client, projectId, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
  await settledRuns(client, projectId, 1);
  const day = (dateFrom: string, dateTo: string) => ({ projectId, dateFrom, dateTo });
  await runVisitorsExport(client, day('2026-11-02', '2026-11-03'));
  await runVisitorsExport(client, { ...day('2026-11-03', '2026-11-04'), format: 'parquet' });
  await runVisitorsExport(client, { ...day('2026-11-04', '2026-11-05'), partial: true });
  await runVisitorsExport(client, day('2026-11-05', '2026-11-06'));
  await runVisitorsExport(client, day('2026-11-06', '2026-11-07'));
  await fs.writeFile(
    path.join(stack.exportDir, projectId, '2026-11-05_2026-11-06', 'manifest.json'),
    '{"proj',
  );
  if (!forget) return;
  await deleteAll(
    client,
    `WorkflowType = '${WorkflowType.visitorsExport}' AND ` +
      `WorkflowId STARTS_WITH '${workflowIdPrefix.visitorsExport}/${projectId}/'`,
  );
}

describe('the destination is the record of done days', () => {
  for (const temporal of ['kept', 'deleted'] as const) {
    test(`day exports ${temporal} in Temporal: only the days without a whole manifest are exported`, async () => {
      const projectId = `manifests-${temporal}`;
      const { client } = stack.env;
      await exportedThenDamaged(client, projectId, temporal === 'deleted');
      const before = stack.sim.requests().length;

      await fireNights(client, projectId, '2026-11-09T01:00:00Z', '2026-11-09T03:00:00Z');
      const run = (await settledRuns(client, projectId, 2, 90_000))[1];
      assert.deepEqual(run?.exported, ['2026-11-04', '2026-11-05', '2026-11-07', '2026-11-08']);
      assert.deepEqual(
        requestedRanges(stack.sim.requests().slice(before), projectId),
        [
          range('2026-11-04', '2026-11-05'),
          range('2026-11-05', '2026-11-06'),
          range('2026-11-07', '2026-11-08'),
          range('2026-11-08', '2026-11-09'),
        ],
        'the days whose manifest is whole (11-01 .. 11-03 and 11-06, the hive layout too) are not asked for',
      );
      const damaged = `${stack.exportDir}/${projectId}/2026-11-05_2026-11-06/manifest.json`;
      assert.deepEqual(run?.warnings, [`${damaged} skipped (not valid JSON): its hours are due`]);
      // 11-05's export completed (kept): found, but its manifest is not whole, so it is run again.
      assert.equal(run?.days.find((d) => d.day === '2026-11-05')?.status, 'exported');
      assert.equal(run?.wholeThrough, '2026-11-09T00:00:00.000Z');
      assert.deepEqual((await describeVisitorsNightly(client, projectId)).missing, []);

      // The partial day and the damaged one are whole now, beside the partial export, which stays.
      const whole = await manifestAt(`${projectId}/2026-11-04_2026-11-05`);
      assert.equal(whole.partial, undefined);
      assert.equal((await manifestAt(`${projectId}/2026-11-04_2026-11-05_partial`)).partial, true);
      assert.equal((await manifestAt(`${projectId}/2026-11-05_2026-11-06`)).rows, 30);
      assert.equal((await manifestAt(`project=${projectId}/day=2026-11-03`)).format, 'parquet');
      await deleteVisitorsSchedule(client, projectId);
    });
  }
});
