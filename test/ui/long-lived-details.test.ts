import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_TASK_QUEUE, WorkflowType } from '../../src/contract/names';
import {
  nightlyWatermarkSummary,
  nightlyWatermarkWorkflowId,
  reportDayUpdate,
  type NightlyWatermarkState,
} from '../../src/contract/nightly';
import { addDays } from '../../src/contract/zone-days';
import { useStack } from '../helpers/stack';

const stack = useStack({ name: 'long-lived-details' });

/** The current details the Temporal UI shows for a workflow (its built-in metadata query). */
async function currentDetails(workflowId: string): Promise<string> {
  const metadata = await stack.client.workflow
    .getHandle(workflowId)
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

test('the nightly watermark explains itself in its current details, in the run it continued as new into', async () => {
  const { client } = stack;
  const projectId = 'details';
  const workflowId = nightlyWatermarkWorkflowId(projectId);
  const state: NightlyWatermarkState = {
    projectId,
    timeZone: 'UTC',
    watermark: '2026-01-01',
    done: [],
    failed: [],
    bridge: null,
    closed: null,
    origin: '2026-01-01',
  };
  const first = await client.workflow.start(WorkflowType.visitorsNightlyWatermark, {
    workflowId,
    taskQueue: DEFAULT_TASK_QUEUE,
    args: [state],
    staticSummary: nightlyWatermarkSummary(projectId),
  });
  assert.equal(await (await first.describe()).staticSummary(), 'Nightly export watermark of details');

  // Each day reported whole moves the watermark and lengthens the history, until the watermark continues as new.
  const handle = client.workflow.getHandle(workflowId);
  let day = state.watermark ?? '';
  for (let reports = 0; (await handle.describe()).runId === first.firstExecutionRunId; reports++) {
    assert.ok(reports < 300, 'the watermark continued as new');
    day = addDays(day, 1);
    await handle.executeUpdate(reportDayUpdate, { args: [{ timeZone: 'UTC', day }] });
  }
  await handle.executeUpdate(reportDayUpdate, {
    args: [{ timeZone: 'UTC', day: addDays(day, 2), error: 'HTTP 503 from the service' }],
  });
  await handle.executeUpdate(reportDayUpdate, { args: [{ timeZone: 'UTC', day: addDays(day, 3) }] });

  assert.deepEqual((await currentDetails(workflowId)).split('\n'), [
    'Nightly export watermark of details',
    `**Whole through:** ${day} (UTC): it and every day before it are exported whole`,
    `**Whole after a day still due:** ${addDays(day, 3)} (the watermark moves once the gap closes)`,
    `**Failed:** ${addDays(day, 2)}, due again on the next run: HTTP 503 from the service`,
  ]);
  await handle.terminate('test over');
});
