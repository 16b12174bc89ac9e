import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ScheduleOverlapPolicy, WorkflowFailedError } from '@temporalio/client';
import {
  backfillVisitorsSchedule,
  createVisitorsSchedule,
  deleteVisitorsSchedule,
  updateVisitorsSchedule,
} from '../../src/client/schedule';
import { describeVisitorsNightly } from '../../src/client/schedule';
import { startVisitorsExport } from '../../src/client/visitors-export';
import { parseApiDate } from '../../src/contract/api-dates';
import { InputValidationError } from '../../src/contract/failure-types';
import { DEFAULT_TASK_QUEUE, visitorsScheduleId, WorkflowType } from '../../src/contract/names';
import type { VisitorsNightlyResult } from '../../src/contract/nightly';
import { addDays, dayBefore, dayStart, localDayOf } from '../../src/contract/zone-days';
import { fireNights, settledRuns } from '../helpers/nightly';
import { useStack } from '../helpers/stack';

// 30 paths: every export is one page, so each range the service is asked for appears once per export of it.
const stack = useStack({ name: 'nightly-operators', simulator: { analytics: { paths: 30 } } });

/** The instant ranges [from, to) the service answered for the project, oldest first. */
function answered(projectId: string): [number, number][] {
  return stack.sim
    .requests()
    .filter((r) => r.route === 'getVisitors' && r.projectId === projectId && r.status === 200)
    .map((r): [number, number] => [
      parseApiDate(r.query.dateFrom ?? '') ?? NaN,
      parseApiDate(r.query.dateTo ?? '') ?? NaN,
    ])
    .sort((a, b) => a[0] - b[0]);
}

/** Every instant from the first range's start to the last one's end was answered exactly once. */
function assertCoveredOnce(projectId: string, from: string, to: string): void {
  const ranges = answered(projectId);
  const iso = (ms: number): string => new Date(ms).toISOString();
  const shown = ranges.map(([a, b]) => `${iso(a)} → ${iso(b)}`).join(', ');
  assert.equal(iso(ranges[0]?.[0] ?? NaN), new Date(from).toISOString(), `first instant: ${shown}`);
  assert.equal(iso(ranges.at(-1)?.[1] ?? NaN), new Date(to).toISOString(), `last instant: ${shown}`);
  for (let i = 1; i < ranges.length; i++) {
    assert.equal(ranges[i]?.[0], ranges[i - 1]?.[1], `no gap and no overlap: ${shown}`);
  }
}

const days = (first: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => addDays(first, i));

describe('a Temporal backfill of 5 nights with AllowAll', () => {
  // Three times, with the pages answered at different speeds: which run starts first must not matter.
  for (const [rep, latencyMs] of [
    [1, 0],
    [2, 400],
    [3, 1_500],
  ] as const) {
    test(`writes all 5 days promptly, each once (repetition ${rep}, pages take ${latencyMs} ms)`, async () => {
      const projectId = `allow-all-${rep}`;
      const { client } = stack.env;
      await createVisitorsSchedule(client, { projectId, at: '02:00', timeZone: 'UTC' });
      if (latencyMs > 0)
        stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'latency', latencyMs });
      const started = Date.now();
      await client.schedule.getHandle(visitorsScheduleId(projectId)).backfill({
        start: new Date('2026-11-02T01:00:00Z'),
        end: new Date('2026-11-06T03:00:00Z'),
        overlap: ScheduleOverlapPolicy.ALLOW_ALL,
      });
      const runs = await settledRuns(client, projectId, 5, 90_000);
      const elapsed = Date.now() - started;
      assert.equal(runs.length, 5);
      const expected = days('2026-11-01', 5);
      // Each run exported (or waited for) the day due to it: nothing deferred to a later night.
      for (const run of runs) {
        assert.ok(run.exported.includes(run.through), `${run.through} done by its own run`);
        assert.deepEqual(run.failed, []);
        assert.equal(run.remaining, 0);
        assert.deepEqual(run.warnings, []);
      }
      assert.deepEqual([...new Set(runs.flatMap((r) => r.exported))].sort(), expected);
      assertCoveredOnce(projectId, '2026-11-01T00:00:00Z', '2026-11-06T00:00:00Z');
      assert.equal(answered(projectId).length, 5, 'each day requested once');
      const folders = (await fs.readdir(path.join(stack.exportDir, projectId))).sort();
      assert.deepEqual(
        folders,
        expected.map((d) => `${d}_${addDays(d, 1)}`),
      );
      // Promptly: the nights run side by side, not one a night (5 pages one after the other take 5 latencies).
      assert.ok(elapsed < 30_000 + 5 * latencyMs, `settled in ${elapsed} ms`);
      await deleteVisitorsSchedule(client, projectId);
    });
  }
});

describe('operators: a failing day', () => {
  test('a failing day does not hold the later ones back, shows, and is retried by the next run', async () => {
    const projectId = 'failing-day';
    const { client } = stack.env;
    await createVisitorsSchedule(client, { projectId, at: '02:00', timeZone: 'UTC' });
    await fireNights(client, projectId, '2026-11-02T01:00:00Z', '2026-11-02T03:00:00Z');
    await settledRuns(client, projectId, 1);
    // The oldest day due next (11-02) is refused with a 403: two nights in a row.
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'status', status: 403, times: 1 });
    await fireNights(client, projectId, '2026-11-06T01:00:00Z', '2026-11-06T03:00:00Z');
    let runs = await settledRuns(client, projectId, 2);
    const second = runs[1];
    assert.deepEqual(second?.exported, ['2026-11-03', '2026-11-04', '2026-11-05']);
    assert.equal(second?.failed[0]?.day, '2026-11-02');
    assert.match(second?.failed[0]?.error ?? '', /403/);
    assert.match(second?.warnings.join('\n') ?? '', /2026-11-02 failed: .*403/);
    assert.equal(second?.wholeThrough, '2026-11-02T00:00:00.000Z', 'whole up to the failed day');
    const described = await describeVisitorsNightly(client, projectId);
    assert.equal(described.failed[0]?.day, '2026-11-02');
    assert.match(described.failed[0]?.error ?? '', /403/);
    assert.deepEqual(described.missing, ['2026-11-02']);
    assert.deepEqual(described.nextRuns[0]?.days.slice(0, 1), ['2026-11-02'], 'describe: retried next');

    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'status', status: 403, times: 1 });
    await fireNights(client, projectId, '2026-11-07T01:00:00Z', '2026-11-07T03:00:00Z');
    runs = await settledRuns(client, projectId, 3);
    assert.deepEqual(runs[2]?.exported, ['2026-11-06'], 'the later day still goes on the second night');
    assert.equal(runs[2]?.failed[0]?.day, '2026-11-02');

    await fireNights(client, projectId, '2026-11-08T01:00:00Z', '2026-11-08T03:00:00Z');
    runs = await settledRuns(client, projectId, 4);
    assert.deepEqual(runs[3]?.exported, ['2026-11-02', '2026-11-07']);
    assert.equal(runs[3]?.wholeThrough, '2026-11-08T00:00:00.000Z');
    assert.deepEqual((await describeVisitorsNightly(client, projectId)).failed, []);
    assertCoveredOnce(projectId, '2026-11-01T00:00:00Z', '2026-11-08T00:00:00Z');
    await deleteVisitorsSchedule(client, projectId);
  });
});

describe('zone changes: carried over by instant, no gap and no overlap', () => {
  test('America/Los_Angeles 23:30 → UTC 02:30: the hours in between are one range', async () => {
    const projectId = 'la-to-utc';
    const { client } = stack.env;
    await createVisitorsSchedule(client, { projectId, at: '23:30', timeZone: 'America/Los_Angeles' });
    // 23:30 LA on 11-20 (07:30Z on 11-21) exports LA 11-19.
    await fireNights(client, projectId, '2026-11-21T07:00:00Z', '2026-11-21T08:00:00Z');
    await settledRuns(client, projectId, 1);
    await updateVisitorsSchedule(client, { projectId, timeZone: 'UTC', at: '02:30' });
    await fireNights(client, projectId, '2026-11-22T02:00:00Z', '2026-11-22T03:00:00Z');
    const runs = await settledRuns(client, projectId, 2);
    assert.deepEqual(runs[1]?.exported, [
      '2026-11-20T08:00:00+00:00_2026-11-21T00:00:00+00:00',
      '2026-11-21',
    ]);
    assertCoveredOnce(projectId, '2026-11-19T08:00:00Z', '2026-11-22T00:00:00Z');
    const described = await describeVisitorsNightly(client, projectId);
    assert.equal(described.latestRun?.timeZone, 'UTC');
    assert.deepEqual(described.missing, []);
    await deleteVisitorsSchedule(client, projectId);
  });

  test('Europe/Paris → Asia/Karachi across the autumn change, and back', async () => {
    const projectId = 'paris-karachi';
    const { client } = stack.env;
    await createVisitorsSchedule(client, { projectId, at: '02:30', timeZone: 'Europe/Paris' });
    // 02:30 Paris on 10-25 (the autumn change; 01:30Z) exports Paris 10-24.
    await fireNights(client, projectId, '2026-10-25T00:00:00Z', '2026-10-25T02:00:00Z');
    await settledRuns(client, projectId, 1);
    await updateVisitorsSchedule(client, { projectId, timeZone: 'Asia/Karachi' });
    // 02:30 Karachi on 10-27 (10-26T21:30Z).
    await fireNights(client, projectId, '2026-10-26T21:00:00Z', '2026-10-26T22:00:00Z');
    await settledRuns(client, projectId, 2);
    await updateVisitorsSchedule(client, { projectId, timeZone: 'Europe/Paris' });
    // 02:30 Paris on 10-29 (01:30Z).
    await fireNights(client, projectId, '2026-10-29T01:00:00Z', '2026-10-29T02:00:00Z');
    const runs = await settledRuns(client, projectId, 3);
    const ranges = (run?: VisitorsNightlyResult) => run?.exported.filter((e) => e.includes('_')) ?? [];
    assert.equal(ranges(runs[1]).length, 1, 'Paris → Karachi: a range between the zones');
    assert.equal(ranges(runs[2]).length, 1, 'Karachi → Paris: a range between the zones');
    // From Paris 10-24 00:00 (+02:00) to Paris 10-29 00:00 (+01:00), each instant once.
    assertCoveredOnce(projectId, '2026-10-23T22:00:00Z', '2026-10-28T23:00:00Z');
    await deleteVisitorsSchedule(client, projectId);
  });
});

test('issue 45 case 5: the zone changed, then a trigger: no failed run, no export of a range not ended', async () => {
  const projectId = 'zone-then-trigger';
  const { client } = stack.env;
  // Los Angeles' last day ended at `end`; its night (00:01 LA) is fired, then the zone becomes Karachi's.
  let end = dayStart(localDayOf(new Date(), 'America/Los_Angeles'), 'America/Los_Angeles').instant;
  if (Date.now() - end < 5 * 60_000) end -= 86_400_000;
  await createVisitorsSchedule(client, { projectId, at: '00:01', timeZone: 'America/Los_Angeles' });
  await fireNights(client, projectId, new Date(end).toISOString(), new Date(end + 120_000).toISOString());
  await settledRuns(client, projectId, 1);
  await updateVisitorsSchedule(client, { projectId, timeZone: 'Asia/Karachi' });
  const described = await describeVisitorsNightly(client, projectId);
  const [next] = described.nextRuns;
  assert.ok(next !== undefined);
  // What describe says the next run exports has ended by then.
  const through = dayBefore(new Date(next.at), 'Asia/Karachi');
  for (const label of next.days) assert.ok(label.slice(0, 10) <= through, `${label} ends by ${next.at}`);

  const triggered = Date.now();
  await client.schedule.getHandle(visitorsScheduleId(projectId)).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  const runs = await settledRuns(client, projectId, 2);
  assert.deepEqual(runs[1]?.failed, []);
  assert.equal(runs[1]?.timeZone, 'Asia/Karachi');
  for (const [, to] of answered(projectId))
    assert.ok(to <= triggered, `${new Date(to).toISOString()} had ended`);
  assertCoveredOnce(
    projectId,
    new Date(end - 86_400_000).toISOString(),
    new Date(answered(projectId).at(-1)?.[1] ?? 0).toISOString(),
  );
  assert.deepEqual((await describeVisitorsNightly(client, projectId)).missing, []);
  await deleteVisitorsSchedule(client, projectId);
});

describe('a day is final only once it has ended, and only from a whole export', () => {
  const today = localDayOf(new Date(), 'Asia/Karachi');

  test('an export of a day that has not ended is refused by the client and the workflow; --partial is not final', async () => {
    const { client } = stack.env;
    const projectId = 'unended';
    const input = { projectId, dateFrom: today, dateTo: addDays(today, 1), timeZone: 'Asia/Karachi' };
    await assert.rejects(startVisitorsExport(client, input), (error: unknown) => {
      assert.ok(error instanceof InputValidationError);
      assert.match(error.message, /dateTo: must have passed in the export's zone/);
      return true;
    });
    // Started without the client (another SDK, the temporal CLI): the workflow refuses it itself.
    const raw = await client.workflow.start(WorkflowType.visitorsExport, {
      workflowId: `${projectId}/raw`,
      taskQueue: DEFAULT_TASK_QUEUE,
      args: [input],
    });
    await assert.rejects(raw.result(), (error: unknown) => {
      assert.ok(error instanceof WorkflowFailedError);
      assert.match(error.cause?.message ?? '', /dateTo: must have passed in the export's zone/);
      return true;
    });
    assert.equal(answered(projectId).length, 0, 'nothing was requested');

    const partial = await startVisitorsExport(client, { ...input, partial: true });
    assert.match(partial.workflowId, /_partial$/);
    const result = await partial.result();
    assert.equal(result.partial, true);
    const folder = path.join(
      stack.exportDir,
      projectId,
      `${today}_${addDays(today, 1)}_Asia-Karachi_partial`,
    );
    const manifest = JSON.parse(await fs.readFile(path.join(folder, 'manifest.json'), 'utf8')) as {
      partial?: boolean;
    };
    assert.equal(manifest.partial, true);
  });

  test('schedule backfill refuses a day that has not ended, before it starts anything', async () => {
    const { client } = stack.env;
    const projectId = 'unended-backfill';
    await createVisitorsSchedule(client, { projectId, at: '02:00', timeZone: 'Asia/Karachi' });
    await assert.rejects(
      backfillVisitorsSchedule(client, projectId, { fromDay: addDays(today, -2), toDay: today }),
      (error: unknown) => {
        assert.ok(error instanceof InputValidationError);
        assert.match(error.message, /toDay: must have passed in the export's zone: .*\(Asia\/Karachi\)/);
        return true;
      },
    );
    let exports = 0;
    for await (const _ of client.workflow.list({ query: `DocsProjectId = '${projectId}'` })) exports += 1;
    assert.equal(exports, 0, 'no day was started');
    await deleteVisitorsSchedule(client, projectId);
  });
});
