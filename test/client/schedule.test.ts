import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import type { ScheduleDescription } from '@temporalio/client';
import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  describeVisitorsNightly,
  describeVisitorsSchedule,
  pauseVisitorsSchedule,
  ScheduleNotFoundError,
  triggerVisitorsSchedule,
  unpauseVisitorsSchedule,
  updateVisitorsSchedule,
} from '../../src/client/schedule';
import { InputValidationError } from '../../src/contract/validation';
import { DEFAULT_TASK_QUEUE, visitorsScheduleId, WorkflowType, zoneSuffix } from '../../src/contract/names';
import type { VisitorsExportManifest } from '../../src/contract/visitors-export';
import type { VisitorsNightlyResult } from '../../src/contract/nightly';
import { addDays } from '../../src/contract/zone-days';
import { Worker } from '@temporalio/worker';
import { fireNights } from '../helpers/nightly';
import { useStack } from '../helpers/stack';
import { temporalCliPath } from '../../dev/temporal';
import { replayOptions } from '../../dev/workflow-bundle';

const exec = promisify(execFile);
const stack = useStack({ name: 'schedule', simulator: { analytics: { paths: 30 } } });

/** Waits until the schedule has `count` completed runs and returns the days they exported, as ranges. */
async function completedRanges(scheduleId: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ranges: string[] = [];
    let runs = 0;
    for await (const run of stack.env.client.workflow.list({
      query: `TemporalScheduledById = '${scheduleId}'`,
    })) {
      if (run.status.name !== 'COMPLETED') continue;
      runs += 1;
      const result = (await stack.env.client.workflow
        .getHandle(run.workflowId, run.runId)
        .result()) as VisitorsNightlyResult;
      ranges.push(...result.exported.map((day) => `${day}_${addDays(day, 1)}`));
    }
    if (runs >= count) return ranges.sort();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  assert.fail(`schedule ${scheduleId} did not complete ${count} runs`);
}

/** `<yesterday>_<today>` of the local calendar in `timeZone` now (computed here without the workflow's code). */
function previousLocalDay(timeZone: string): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date());
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  return `${yesterday}_${today}`;
}

function timeOf(described: ScheduleDescription): [number | undefined, number | undefined] {
  const calendar = described.spec.calendars?.[0];
  return [calendar?.hour?.[0]?.start, calendar?.minute?.[0]?.start];
}

function actionInput(described: ScheduleDescription): unknown {
  return described.action.type === 'startWorkflow' ? described.action.args?.[0] : undefined;
}

/**
 * Creates a project's schedule at `at` in `timeZone`, backfills [start, end) and waits until the runs have
 * exported exactly the `expected` days (`<dateFrom>_<dateTo>`); returns the schedule id.
 */
async function backfillAndExpect(
  projectId: string,
  schedule: { at: string; timeZone: string },
  window: { start: string; end: string },
  expected: string[],
): Promise<string> {
  await createVisitorsSchedule(stack.env.client, { projectId, ...schedule });
  await fireNights(stack.env.client, projectId, window.start, window.end);
  const scheduleId = visitorsScheduleId(projectId);
  assert.deepEqual(await completedRanges(scheduleId, expected.length), expected);
  assert.deepEqual(
    await exportedRanges(projectId),
    expected.map((range) => `${range}${zoneSuffix(schedule.timeZone)}`),
  );
  return scheduleId;
}

/** The date ranges the service was asked for by a project's visitor page requests, in order. */
function requestedRanges(projectId: string): { dateFrom: string; dateTo: string }[] {
  return stack.sim
    .requests()
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId)
    .map((r) => ({ dateFrom: r.query.dateFrom ?? '', dateTo: r.query.dateTo ?? '' }));
}

async function exportedRanges(projectId: string): Promise<string[]> {
  return (await fs.readdir(path.join(stack.exportDir, projectId))).sort();
}

describe('nightly visitors export schedule', () => {
  test('create, describe, pause, unpause, update (only what changes), delete', async () => {
    await createVisitorsSchedule(stack.env.client, {
      projectId: 'lifecycle',
      at: '02:30',
      timeZone: 'Europe/Paris',
      catchupWindow: '2 hours',
    });
    let described = await describeVisitorsSchedule(stack.env.client, 'lifecycle');
    assert.equal(described.scheduleId, 'visitors-export-nightly/lifecycle');
    assert.equal(described.spec.timezone, 'Europe/Paris');
    assert.deepEqual(timeOf(described), [2, 30]);
    assert.equal(described.policies.overlap, 'SKIP');
    assert.equal(described.policies.catchupWindow, 7_200_000);
    assert.equal(described.action.type, 'startWorkflow');
    assert.equal(
      described.action.type === 'startWorkflow' && described.action.workflowType,
      WorkflowType.visitorsNightly,
    );
    assert.deepEqual(actionInput(described), { projectId: 'lifecycle', timeZone: 'Europe/Paris' });
    assert.ok(described.info.nextActionTimes.length > 0);

    await pauseVisitorsSchedule(stack.env.client, 'lifecycle', 'maintenance');
    described = await describeVisitorsSchedule(stack.env.client, 'lifecycle');
    assert.equal(described.state.paused, true);
    assert.equal(described.state.note, 'maintenance');
    await unpauseVisitorsSchedule(stack.env.client, 'lifecycle');

    await updateVisitorsSchedule(stack.env.client, { projectId: 'lifecycle', at: '04:15' });
    described = await describeVisitorsSchedule(stack.env.client, 'lifecycle');
    assert.equal(described.state.paused, false);
    assert.deepEqual(timeOf(described), [4, 15]);
    assert.equal(described.spec.timezone, 'Europe/Paris', 'unchanged settings are kept');
    assert.equal(described.policies.catchupWindow, 7_200_000);

    await updateVisitorsSchedule(stack.env.client, {
      projectId: 'lifecycle',
      timeZone: 'UTC',
      format: 'json',
    });
    described = await describeVisitorsSchedule(stack.env.client, 'lifecycle');
    assert.equal(described.spec.timezone, 'UTC');
    assert.deepEqual(timeOf(described), [4, 15]);
    assert.deepEqual(actionInput(described), { projectId: 'lifecycle', timeZone: 'UTC', format: 'json' });

    await deleteVisitorsSchedule(stack.env.client, 'lifecycle');
    await assert.rejects(describeVisitorsSchedule(stack.env.client, 'lifecycle'), ScheduleNotFoundError);
  });

  test('the catch-up window defaults to 1 day', async () => {
    await createVisitorsSchedule(stack.env.client, { projectId: 'defaults', at: '03:00', timeZone: 'UTC' });
    const described = await describeVisitorsSchedule(stack.env.client, 'defaults');
    assert.equal(described.policies.catchupWindow, 86_400_000);
    await deleteVisitorsSchedule(stack.env.client, 'defaults');
  });

  test('bad options are rejected before anything is created', async () => {
    await assert.rejects(
      updateVisitorsSchedule(stack.env.client, { projectId: 'bad', concurrency: 17 }),
      /concurrency: must be at most 16/,
    );
    await assert.rejects(
      createVisitorsSchedule(stack.env.client, { projectId: 'bad', at: '25:00', timeZone: 'UTC' }),
      (error: unknown) =>
        error instanceof InputValidationError && /at: must be a time of day HH:MM/.test(error.message),
    );
    await assert.rejects(
      createVisitorsSchedule(stack.env.client, { projectId: 'bad', at: '02:00', timeZone: 'Mars/Olympus' }),
      /timeZone: must be an IANA time zone/,
    );
    await assert.rejects(describeVisitorsSchedule(stack.env.client, 'bad'), ScheduleNotFoundError);
  });

  test('trigger exports the previous day of now in the schedule zone', async () => {
    // UTC+14: for most of the UTC day, the local date is already the next one.
    const zone = 'Pacific/Kiritimati';
    await createVisitorsSchedule(stack.env.client, { projectId: 'triggered', at: '02:00', timeZone: zone });
    const before = previousLocalDay(zone);
    await triggerVisitorsSchedule(stack.env.client, 'triggered');
    const [range] = await completedRanges('visitors-export-nightly/triggered', 1);
    assert.ok(
      range === before || range === previousLocalDay(zone),
      `${range} is the previous day in ${zone}`,
    );
    assert.deepEqual(await exportedRanges('triggered'), [`${range}_Pacific-Kiritimati`]);
    await deleteVisitorsSchedule(stack.env.client, 'triggered');
  });

  test('a backfill over 3 days writes 3 exports, each the previous day in the schedule zone', async () => {
    // 01:00 in Auckland (UTC+13 in November) is 12:00 UTC the day before: a UTC-only reading would be a day off.
    const expected = ['2026-11-09_2026-11-10', '2026-11-10_2026-11-11', '2026-11-11_2026-11-12'];
    const scheduleId = await backfillAndExpect(
      'backfilled',
      { at: '01:00', timeZone: 'Pacific/Auckland' },
      { start: '2026-11-09T00:00:00Z', end: '2026-11-12T00:00:00Z' },
      expected,
    );
    for (const range of expected) {
      const folder = `${range}_Pacific-Auckland`;
      const csv = await fs.readFile(path.join(stack.exportDir, 'backfilled', folder, 'visitors.csv'), 'utf8');
      assert.equal(csv.trim().split('\n').length, 31);
    }
    const requested = requestedRanges('backfilled').map((r) => `${r.dateFrom}_${r.dateTo}`);
    // The service reads a bare date as midnight UTC: each Auckland day is sent with its offset.
    assert.deepEqual(
      [...new Set(requested)].sort(),
      expected.map((range) => range.replace(/(\d{4}-\d{2}-\d{2})/g, '$1T00:00:00+13:00')),
      'the service was asked for exactly these days',
    );
    // The ranges above were derived inside the sandbox (V8 Intl); the runs also replay cleanly there.
    for await (const run of stack.env.client.workflow.list({
      query: `TemporalScheduledById = '${scheduleId}'`,
    })) {
      const history = await stack.env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      await Worker.runReplayHistory(await replayOptions(), history, run.workflowId);
    }
    await deleteVisitorsSchedule(stack.env.client, 'backfilled');
  });

  test('02:30 in Paris exports the Paris day: sent with its offsets, filed and described under the local day', async () => {
    // The case: a backfill at 2026-11-10 02:30 Paris used to ask for 2026-11-09..2026-11-10, which the
    // service reads as the UTC day 2026-11-09T00:00Z..2026-11-10T00:00Z, an hour off the Paris day.
    await backfillAndExpect(
      'paris',
      { at: '02:30', timeZone: 'Europe/Paris' },
      { start: '2026-11-10T01:00:00Z', end: '2026-11-10T02:00:00Z' },
      ['2026-11-09_2026-11-10'],
    );
    const sent = requestedRanges('paris');
    assert.ok(sent.length > 0);
    for (const range of sent) {
      assert.deepEqual(range, { dateFrom: '2026-11-09T00:00:00+01:00', dateTo: '2026-11-10T00:00:00+01:00' });
      assert.equal(Date.parse(range.dateFrom), Date.parse('2026-11-08T23:00:00Z'));
    }
    const manifest = JSON.parse(
      await fs.readFile(
        path.join(stack.exportDir, 'paris', '2026-11-09_2026-11-10_Europe-Paris', 'manifest.json'),
        'utf8',
      ),
    ) as VisitorsExportManifest;
    assert.deepEqual(manifest.range, {
      dateFrom: '2026-11-09',
      dateTo: '2026-11-10',
      dateToExclusive: true,
      timeZone: 'Europe/Paris',
      requested: { dateFrom: '2026-11-09T00:00:00+01:00', dateTo: '2026-11-10T00:00:00+01:00' },
    });
    await deleteVisitorsSchedule(stack.env.client, 'paris');
  });

  // Paris changes its offset at 03:00 on 2026-10-25 (+02:00 to +01:00: 25 hours) and at 02:00 on 2026-03-29
  // (+01:00 to +02:00: 23 hours); each day is backfilled at 02:30 Paris the day after, as above.
  const parisDstDays = [
    {
      projectId: 'paris-25h',
      window: { start: '2026-10-26T01:00:00Z', end: '2026-10-26T02:00:00Z' },
      day: '2026-10-25_2026-10-26',
      requested: { dateFrom: '2026-10-25T00:00:00+02:00', dateTo: '2026-10-26T00:00:00+01:00' },
      hours: 25,
    },
    {
      projectId: 'paris-23h',
      window: { start: '2026-03-30T00:00:00Z', end: '2026-03-30T01:00:00Z' },
      day: '2026-03-29_2026-03-30',
      requested: { dateFrom: '2026-03-29T00:00:00+01:00', dateTo: '2026-03-30T00:00:00+02:00' },
      hours: 23,
    },
  ];
  for (const { projectId, window, day, requested, hours } of parisDstDays) {
    test(`02:30 in Paris after a ${hours}-hour day: sent with both offsets, filed and described under the local day`, async () => {
      await backfillAndExpect(projectId, { at: '02:30', timeZone: 'Europe/Paris' }, window, [day]);
      const sent = requestedRanges(projectId);
      assert.ok(sent.length > 0);
      for (const range of sent) {
        assert.deepEqual(range, requested);
        assert.equal(Date.parse(range.dateTo) - Date.parse(range.dateFrom), hours * 3_600_000);
      }
      const manifest = JSON.parse(
        await fs.readFile(
          path.join(stack.exportDir, projectId, `${day}_Europe-Paris`, 'manifest.json'),
          'utf8',
        ),
      ) as VisitorsExportManifest;
      const [dateFrom, dateTo] = day.split('_');
      assert.deepEqual(manifest.range, {
        dateFrom,
        dateTo,
        dateToExclusive: true,
        timeZone: 'Europe/Paris',
        requested,
      });
      await deleteVisitorsSchedule(stack.env.client, projectId);
    });
  }

  test('a schedule created with the official temporal CLI behaves the same', async () => {
    const cli = temporalCliPath();
    assert.ok(cli, 'the temporal CLI is needed for this test');
    const common = ['--address', stack.env.address, '--namespace', 'default'];
    await exec(cli, [
      'schedule',
      'create',
      ...common,
      '--schedule-id',
      'visitors-export-nightly/cli',
      '--calendar',
      '{"hour":"1","minute":"0"}',
      '--time-zone',
      'Pacific/Auckland',
      '--overlap-policy',
      'Skip',
      '--catchup-window',
      '24h',
      '--search-attribute',
      'DocsProjectId="cli"',
      '--workflow-id',
      'visitors-export-nightly/cli/run',
      '--type',
      WorkflowType.visitorsNightly,
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
      'visitors-export-nightly/cli',
      '--start-time',
      '2026-11-09T00:00:00Z',
      '--end-time',
      '2026-11-11T00:00:00Z',
      '--overlap-policy',
      'BufferAll',
    ]);
    const expected = ['2026-11-09_2026-11-10', '2026-11-10_2026-11-11'];
    assert.deepEqual(await completedRanges('visitors-export-nightly/cli', 2), expected);
    assert.deepEqual(
      await exportedRanges('cli'),
      expected.map((range) => `${range}_Pacific-Auckland`),
    );

    // The client module manages it like its own: an update keeps the zone and the input it did not change.
    await updateVisitorsSchedule(stack.env.client, { projectId: 'cli', at: '02:00' });
    const described = await describeVisitorsSchedule(stack.env.client, 'cli');
    assert.equal(described.spec.timezone, 'Pacific/Auckland');
    assert.deepEqual(timeOf(described), [2, 0]);
    assert.deepEqual(actionInput(described), { projectId: 'cli', timeZone: 'Pacific/Auckland' });
    assert.equal(described.policies.overlap, 'SKIP');
    await deleteVisitorsSchedule(stack.env.client, 'cli');
  });

  test('a CLI schedule without zone or input timeZone exports the previous UTC day', async () => {
    const cli = temporalCliPath();
    assert.ok(cli, 'the temporal CLI is needed for this test');
    const common = ['--address', stack.env.address, '--namespace', 'default', '--schedule-id', 'no-zone'];
    await exec(cli, [
      'schedule',
      'create',
      ...common,
      '--cron',
      '0 1 * * *',
      '--workflow-id',
      'no-zone/run',
      '--type',
      WorkflowType.visitorsNightly,
      '--task-queue',
      DEFAULT_TASK_QUEUE,
      '--input',
      JSON.stringify({ projectId: 'no-zone' }),
    ]);
    const before = previousLocalDay('UTC');
    await exec(cli, ['schedule', 'trigger', ...common]);
    const [range] = await completedRanges('no-zone', 1);
    assert.ok(range === before || range === previousLocalDay('UTC'), `${range} is the previous UTC day`);
    let workflowId = '';
    for await (const run of stack.env.client.workflow.list({ query: `TemporalScheduledById = 'no-zone'` })) {
      workflowId = run.workflowId;
    }
    const result = (await stack.env.client.workflow.getHandle(workflowId).result()) as VisitorsNightlyResult;
    assert.equal(result.timeZone, 'UTC');
    assert.equal(result.timeZoneFrom, 'default');
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(await exportedRanges('no-zone'), [range]);
  });

  test('backfill exports the days given, in the schedule zone; the next night does not send them again', async () => {
    const projectId = 'backfill-days';
    await createVisitorsSchedule(stack.env.client, { projectId, at: '02:30', timeZone: 'Europe/Paris' });
    // The night of 11-09: 11-08 exported.
    await fireNights(stack.env.client, projectId, '2026-11-09T01:00:00Z', '2026-11-09T02:00:00Z');
    await completedRanges(visitorsScheduleId(projectId), 1);
    const started = await backfillVisitorsSchedule(stack.env.client, projectId, {
      fromDay: '2026-11-05',
      toDay: '2026-11-10',
    });
    assert.equal(started.timeZone, 'Europe/Paris');
    assert.deepEqual(
      started.days.map((d) => d.day),
      ['2026-11-05', '2026-11-06', '2026-11-07', '2026-11-08', '2026-11-09', '2026-11-10'],
    );
    for (const { workflowId } of started.days) {
      await stack.env.client.workflow.getHandle(workflowId).result();
    }
    const afterBackfill = requestedRanges(projectId).length;
    assert.equal(afterBackfill, 1 + 6, 'the night of 11-09, then each backfilled day once');
    // The night of 11-12 is due 11-09 .. 11-11: 11-09 and 11-10 are found exported, only 11-11 is asked for.
    await fireNights(stack.env.client, projectId, '2026-11-12T01:00:00Z', '2026-11-12T02:00:00Z');
    await completedRanges(visitorsScheduleId(projectId), 2);
    const sent = requestedRanges(projectId).slice(afterBackfill);
    assert.deepEqual(sent, [{ dateFrom: '2026-11-11T00:00:00+01:00', dateTo: '2026-11-12T00:00:00+01:00' }]);
    const described = await describeVisitorsNightly(stack.env.client, projectId);
    assert.equal(described.latestRun?.through, '2026-11-11');
    assert.deepEqual(described.missing, []);
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });
});
