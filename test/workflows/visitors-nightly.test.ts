import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import {
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  pauseVisitorsSchedule,
  unpauseVisitorsSchedule,
} from '../../src/client/schedule';
import { describeVisitorsNightly } from '../../src/client/schedule';
import { visitorsScheduleId } from '../../src/contract/names';
import { useStack } from '../helpers/stack';
import { fireNights, requestedRanges, settledRuns, zoneDay } from '../helpers/nightly';

// 30 paths: every day is one page, so each day the service is asked for appears once per export of it.
const stack = useStack({ name: 'nightly', simulator: { analytics: { paths: 30 } } });

const requested = (projectId: string): string[] => requestedRanges(stack.sim.requests(), projectId);

async function folders(projectId: string): Promise<string[]> {
  return (await fs.readdir(path.join(stack.exportDir, projectId))).sort();
}

describe('nightly exports: every day of the zone exactly once', () => {
  test('spring change: 02:30 Paris does not exist on 2026-03-29, and no day is missing', async () => {
    const projectId = 'spring';
    await createVisitorsSchedule(stack.env.client, { projectId, at: '02:30', timeZone: 'Europe/Paris' });
    // Nights of 03-27 .. 03-31: Temporal starts 4 runs (none on 03-29, whose 02:30 does not exist).
    await fireNights(stack.env.client, projectId, '2026-03-27T00:00:00Z', '2026-03-31T02:00:00Z');
    const runs = await settledRuns(stack.env.client, projectId, 4);
    assert.equal(runs.length, 4, 'the server skips the night whose 02:30 does not exist');
    assert.deepEqual(
      runs.map((r) => r.exported),
      [['2026-03-26'], ['2026-03-27'], ['2026-03-28', '2026-03-29'], ['2026-03-30']],
      'the run after the skipped night also exports the day the skipped run would have',
    );
    assert.deepEqual(requested(projectId), [
      zoneDay('2026-03-26', '2026-03-27', '+01:00'),
      zoneDay('2026-03-27', '2026-03-28', '+01:00'),
      zoneDay('2026-03-28', '2026-03-29', '+01:00'),
      zoneDay('2026-03-29', '2026-03-30', '+01:00', '+02:00'),
      zoneDay('2026-03-30', '2026-03-31', '+02:00'),
    ]);
    assert.deepEqual(
      await folders(projectId),
      ['26', '27', '28', '29', '30'].map((d) => `2026-03-${d}_2026-03-${Number(d) + 1}_Europe-Paris`),
    );
    assert.equal(runs.at(-1)?.wholeThrough, '2026-03-30T22:00:00.000Z');
    const nightly = await describeVisitorsNightly(stack.env.client, projectId);
    assert.equal(nightly.latestRun?.through, '2026-03-30');
    assert.deepEqual(nightly.missing, []);
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });

  test('autumn change: 02:30 Paris happens twice on 2026-10-25, and no day is exported twice', async (t) => {
    const projectId = 'autumn';
    await createVisitorsSchedule(stack.env.client, { projectId, at: '02:30', timeZone: 'Europe/Paris' });
    await fireNights(stack.env.client, projectId, '2026-10-24T00:00:00Z', '2026-10-27T02:00:00Z');
    const runs = await settledRuns(stack.env.client, projectId, 4);
    t.diagnostic(`${runs.length} runs for 4 nights (5 if the server fired both 02:30s of 10-25)`);
    const exported = runs.flatMap((r) => r.exported ?? []);
    assert.deepEqual(exported, ['2026-10-23', '2026-10-24', '2026-10-25', '2026-10-26']);
    assert.deepEqual(requested(projectId), [
      zoneDay('2026-10-23', '2026-10-24', '+02:00'),
      zoneDay('2026-10-24', '2026-10-25', '+02:00'),
      zoneDay('2026-10-25', '2026-10-26', '+02:00', '+01:00'),
      zoneDay('2026-10-26', '2026-10-27', '+01:00'),
    ]);
    // The dev server fires 02:30 once on 10-25, at the second one (CET, 01:30Z); the first (CEST, 00:30Z) would
    // have the same day before it (test/contract/zone-days.test.ts), and a second fire for a day already whole
    // sends nothing (the test below).
    assert.ok(runs.some((r) => r.through === '2026-10-24'));
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });

  test('paused for 3 nights, then unpaused: the next run exports the 3 days and its own, each once', async () => {
    const projectId = 'paused';
    await createVisitorsSchedule(stack.env.client, { projectId, at: '02:00', timeZone: 'UTC' });
    // The night of 11-02 runs: 11-01 is exported.
    await fireNights(stack.env.client, projectId, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
    await settledRuns(stack.env.client, projectId, 1);
    await pauseVisitorsSchedule(stack.env.client, projectId, 'maintenance');
    // The nights of 11-03, 11-04 and 11-05 pass while paused: nothing runs, so nothing is fired for them.
    let nightly = await describeVisitorsNightly(stack.env.client, projectId);
    assert.equal(nightly.paused, true);
    assert.equal(nightly.latestRun?.through, '2026-11-01');
    await unpauseVisitorsSchedule(stack.env.client, projectId);
    nightly = await describeVisitorsNightly(stack.env.client, projectId);
    assert.equal(
      nightly.nextRuns[0]?.days[0],
      '2026-11-02',
      'describe: the next run starts after the last whole day',
    );
    // The first night after the pause: 11-06.
    await fireNights(stack.env.client, projectId, '2026-11-06T01:00:00Z', '2026-11-06T03:00:00Z');
    const runs = await settledRuns(stack.env.client, projectId, 2);
    assert.deepEqual(runs[1]?.exported, ['2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05']);
    assert.deepEqual(requested(projectId), [
      '2026-11-01_2026-11-02',
      '2026-11-02_2026-11-03',
      '2026-11-03_2026-11-04',
      '2026-11-04_2026-11-05',
      '2026-11-05_2026-11-06',
    ]);
    assert.equal(runs[1]?.wholeThrough, '2026-11-06T00:00:00.000Z');
    assert.equal(runs[1]?.files.length, 4 * 3, 'each day: export file, totals.json, manifest.json');
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });

  test('a second fire for a day already whole sends nothing; so do two fires at once', async () => {
    const projectId = 'twice';
    await createVisitorsSchedule(stack.env.client, { projectId, at: '02:00', timeZone: 'UTC' });
    const handle = stack.env.client.schedule.getHandle(visitorsScheduleId(projectId));
    // Two fires while the first export still runs (its page takes 4 s; overlap allowed): both runs find
    // yesterday due, one export runs. A second apart, so that the server gives them distinct ids.
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'latency', latencyMs: 4_000 });
    await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    await sleep(1_100);
    await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    let runs = await settledRuns(stack.env.client, projectId, 2);
    // The run that found the day's export running waited for it: both report the day done, neither defers it.
    assert.deepEqual(
      runs
        .map((r) => r.days.map((d) => d.status))
        .flat()
        .sort(),
      ['exported', 'found-exported'],
    );
    assert.deepEqual(
      runs.map((r) => r.warnings),
      [[], []],
    );
    const sentOnce = requested(projectId);
    assert.equal(sentOnce.length, 1, `yesterday requested once: ${sentOnce.join(', ')}`);
    assert.equal((await folders(projectId)).length, 1, 'one export written');
    // A third fire, later the same day: nothing is due.
    await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    runs = await settledRuns(stack.env.client, projectId, 3);
    assert.deepEqual(requested(projectId), sentOnce, 'nothing sent');
    const last = runs.find((r) => r.exported.length === 0 && r.warnings.length === 0);
    assert.ok(last, 'a run that found nothing due');
    assert.equal(last.pages, 0);
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });

  test('catch-up is capped per run; the rest is reported and done by the next run', async () => {
    const projectId = 'capped';
    await createVisitorsSchedule(stack.env.client, {
      projectId,
      at: '02:00',
      timeZone: 'UTC',
      maxCatchUpDays: 2,
    });
    await fireNights(stack.env.client, projectId, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
    await fireNights(stack.env.client, projectId, '2026-11-06T01:00:00Z', '2026-11-06T03:00:00Z');
    let runs = await settledRuns(stack.env.client, projectId, 2);
    assert.deepEqual(runs[1]?.exported, ['2026-11-02', '2026-11-03']);
    assert.equal(runs[1]?.remaining, 2);
    assert.match(runs[1]?.warnings.at(-1) ?? '', /2 day\(s\) up to 2026-11-05 still due/);
    await fireNights(stack.env.client, projectId, '2026-11-07T01:00:00Z', '2026-11-07T03:00:00Z');
    runs = await settledRuns(stack.env.client, projectId, 3);
    assert.deepEqual(runs[2]?.exported, ['2026-11-04', '2026-11-05']);
    assert.equal(runs[2]?.remaining, 1);
    assert.equal(new Set(requested(projectId)).size, requested(projectId).length, 'no day twice');
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });

  test('a schedule made elsewhere with time_zone_name alone exports the days of its zone', async () => {
    const projectId = 'foreign';
    // As another SDK would create it: the spec's zone, an input without timeZone.
    await stack.env.client.schedule.create({
      scheduleId: visitorsScheduleId(projectId),
      spec: { calendars: [{ hour: 1, minute: 0 }], timezone: 'Pacific/Auckland' },
      action: {
        type: 'startWorkflow',
        workflowType: 'visitorsNightly',
        taskQueue: 'docs-agent',
        workflowId: `${visitorsScheduleId(projectId)}/run`,
        args: [{ projectId }],
      },
    });
    await fireNights(stack.env.client, projectId, '2026-11-09T11:00:00Z', '2026-11-09T13:00:00Z');
    const [run] = await settledRuns(stack.env.client, projectId, 1);
    assert.equal(run?.timeZoneFrom, 'schedule');
    assert.equal(run?.timeZone, 'Pacific/Auckland');
    assert.deepEqual(requested(projectId), [zoneDay('2026-11-09', '2026-11-10', '+13:00')]);
    assert.deepEqual(await folders(projectId), ['2026-11-09_2026-11-10_Pacific-Auckland']);
    await deleteVisitorsSchedule(stack.env.client, projectId);
  });
});
