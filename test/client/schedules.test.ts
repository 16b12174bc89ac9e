import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  describeVisitorsSchedule,
  pauseVisitorsSchedule,
  ScheduleNotFoundError,
  triggerVisitorsSchedule,
  unpauseVisitorsSchedule,
  updateVisitorsSchedule,
} from '../../src/client/schedules';
import { InputValidationError } from '../../src/contract/validation';
import { DEFAULT_TASK_QUEUE, WorkflowType } from '../../src/contract/names';
import { startSimulator, type Simulator } from '../../src/simulator';
import { startTemporal, temporalCliPath } from '../helpers/temporal';
import { startTestWorker, type TestWorker } from '../helpers/worker';

const exec = promisify(execFile);
let env: TestWorkflowEnvironment;
let sim: Simulator;
let worker: TestWorker;
let exportDir: string;

before(async () => {
  env = await startTemporal();
  sim = await startSimulator({ analytics: { paths: 30 } });
  exportDir = await fs.mkdtemp(path.join(os.tmpdir(), 'schedules-'));
  worker = await startTestWorker(env, { service: sim, exportDir });
});
after(async () => {
  await worker.stop();
  await sim.close();
  await env.teardown();
  await fs.rm(exportDir, { recursive: true, force: true });
});

/** Waits until the schedule has `count` completed runs and returns their results' ranges. */
async function completedRanges(scheduleId: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ranges: string[] = [];
    for await (const run of env.client.workflow.list({ query: `TemporalScheduledById = '${scheduleId}'` })) {
      if (run.status.name !== 'COMPLETED') continue;
      const result = (await env.client.workflow.getHandle(run.workflowId, run.runId).result()) as {
        dateFrom: string;
        dateTo: string;
      };
      ranges.push(`${result.dateFrom}_${result.dateTo}`);
    }
    if (ranges.length >= count) return ranges.sort();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  assert.fail(`schedule ${scheduleId} did not complete ${count} runs`);
}

async function exportedRanges(projectId: string): Promise<string[]> {
  return (await fs.readdir(path.join(exportDir, projectId))).sort();
}

describe('nightly visitors export schedule', () => {
  test('create, describe, pause, unpause, update, delete', async () => {
    await createVisitorsSchedule(env.client, {
      projectId: 'lifecycle',
      at: '02:30',
      timeZone: 'Europe/Paris',
    });
    let described = await describeVisitorsSchedule(env.client, 'lifecycle');
    assert.equal(described.spec.timezone, 'Europe/Paris');
    assert.equal(described.policies.overlap, 'SKIP');
    assert.equal(described.policies.catchupWindow, 86_400_000);
    assert.equal(
      described.action.type === 'startWorkflow' && described.action.workflowType,
      WorkflowType.visitorsExport,
    );
    await pauseVisitorsSchedule(env.client, 'lifecycle', 'maintenance');
    described = await describeVisitorsSchedule(env.client, 'lifecycle');
    assert.equal(described.state.paused, true);
    assert.equal(described.state.note, 'maintenance');
    await unpauseVisitorsSchedule(env.client, 'lifecycle');
    await updateVisitorsSchedule(env.client, {
      projectId: 'lifecycle',
      at: '04:15',
      timeZone: 'UTC',
      format: 'json',
    });
    described = await describeVisitorsSchedule(env.client, 'lifecycle');
    assert.equal(described.state.paused, false);
    assert.equal(described.spec.timezone, 'UTC');
    assert.deepEqual(
      described.spec.calendars?.[0]?.hour?.map((r) => r.start),
      [4],
    );
    await deleteVisitorsSchedule(env.client, 'lifecycle');
    await assert.rejects(describeVisitorsSchedule(env.client, 'lifecycle'), ScheduleNotFoundError);
  });

  test('bad options are rejected before anything is created', async () => {
    await assert.rejects(
      createVisitorsSchedule(env.client, { projectId: 'bad', at: '25:00', timeZone: 'UTC' }),
      (error: unknown) =>
        error instanceof InputValidationError && /at: must be a time of day HH:MM/.test(error.message),
    );
    await assert.rejects(
      createVisitorsSchedule(env.client, { projectId: 'bad', at: '02:00', timeZone: 'Mars/Olympus' }),
      /timeZone: must be an IANA time zone/,
    );
    await assert.rejects(describeVisitorsSchedule(env.client, 'bad'), ScheduleNotFoundError);
  });

  test('trigger exports the previous day of now in the schedule zone', async () => {
    await createVisitorsSchedule(env.client, { projectId: 'triggered', at: '02:00', timeZone: 'UTC' });
    await triggerVisitorsSchedule(env.client, 'triggered');
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
    assert.deepEqual(await completedRanges('visitors-export-nightly/triggered', 1), [
      `${yesterday}_${today}`,
    ]);
    assert.deepEqual(await exportedRanges('triggered'), [`${yesterday}_${today}`]);
    await deleteVisitorsSchedule(env.client, 'triggered');
  });

  test('a backfill over 3 days writes 3 exports, each the previous day in the schedule zone', async () => {
    // 01:00 in Auckland (UTC+13 in November) is 12:00 UTC the day before: a UTC-only reading would be a day off.
    await createVisitorsSchedule(env.client, {
      projectId: 'backfilled',
      at: '01:00',
      timeZone: 'Pacific/Auckland',
    });
    await backfillVisitorsSchedule(env.client, 'backfilled', {
      start: new Date('2026-11-09T00:00:00Z'),
      end: new Date('2026-11-12T00:00:00Z'),
    });
    const expected = ['2026-11-09_2026-11-10', '2026-11-10_2026-11-11', '2026-11-11_2026-11-12'];
    assert.deepEqual(await completedRanges('visitors-export-nightly/backfilled', 3), expected);
    assert.deepEqual(await exportedRanges('backfilled'), expected);
    for (const range of expected) {
      const csv = await fs.readFile(path.join(exportDir, 'backfilled', range, 'visitors.csv'), 'utf8');
      assert.equal(csv.trim().split('\n').length, 31);
    }
    await deleteVisitorsSchedule(env.client, 'backfilled');
  });

  test('a schedule created with the official temporal CLI behaves the same', async () => {
    const cli = temporalCliPath();
    assert.ok(cli, 'the temporal CLI is needed for this test');
    const common = ['--address', env.address, '--namespace', 'default'];
    await exec(cli, [
      'schedule',
      'create',
      ...common,
      '--schedule-id',
      'cli-nightly',
      '--calendar',
      '{"hour":"1","minute":"0"}',
      '--time-zone',
      'Pacific/Auckland',
      '--overlap-policy',
      'Skip',
      '--workflow-id',
      'visitors-export-nightly/cli/run',
      '--type',
      WorkflowType.visitorsExport,
      '--task-queue',
      DEFAULT_TASK_QUEUE,
      '--input',
      JSON.stringify({ projectId: 'cli', timeZone: 'Pacific/Auckland' }),
    ]);
    await exec(cli, [
      'schedule',
      'backfill',
      ...common,
      '--schedule-id',
      'cli-nightly',
      '--start-time',
      '2026-11-09T00:00:00Z',
      '--end-time',
      '2026-11-11T00:00:00Z',
      '--overlap-policy',
      'AllowAll',
    ]);
    const expected = ['2026-11-09_2026-11-10', '2026-11-10_2026-11-11'];
    assert.deepEqual(await completedRanges('cli-nightly', 2), expected);
    assert.deepEqual(await exportedRanges('cli'), expected);
  });
});
