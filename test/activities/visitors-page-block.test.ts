import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { describe, test } from 'node:test';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type {
  PageBlockProgress,
  PageBlockRequest,
  PageBlockResult,
  PermitSpan,
} from '../../src/activities/visitors-page-block';
import { createVisitorsExportActivities } from '../../src/activities/visitors-export';
import { stagedChunkName, stagingDirectory } from '../../src/exports/layout';
import { useExportActivities } from '../helpers/export-activities';
import { failingAt, offsetsIn, stagedChunksNow } from '../helpers/staged-chunks';

// Chunks by count alone (no 250 ms flush): the tests assert their exact layout, whatever the machine's load.
const fixture = useExportActivities(95, { chunkWaitMs: Infinity });

const PAGE_SIZE = 10;

function permits(count: number, spendInMs = 60_000): PermitSpan {
  return { count, grantedAt: Date.now(), spendBy: Date.now() + spendInMs };
}

async function runBlock(
  exportKey: string,
  overrides: Partial<PageBlockRequest> = {},
  env = new MockActivityEnvironment(),
  activities = fixture.activities,
): Promise<PageBlockResult> {
  await new MockActivityEnvironment().run(activities.prepareVisitorsExportStaging, exportKey);
  return env.run(activities.fetchVisitorsPageBlock, {
    exportKey,
    projectId: 'acme',
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    offset: 0,
    limit: PAGE_SIZE,
    concurrency: 4,
    permits: [permits(50)],
    ...overrides,
  });
}

const requests = () => fixture.sim.requests().filter((r) => r.route === 'getVisitors');
const stagedFiles = (exportKey: string) => fs.readdir(stagingDirectory(fixture.exportDir, exportKey));

describe('fetchVisitorsPageBlock', () => {
  test('fetches up to the last page, stages it as one chunk, and sends at most concurrency - 1 requests past it', async () => {
    const result = await runBlock('whole');
    assert.deepEqual(
      result.pages.map((p) => [p.offset, p.rows, p.hasMore]),
      [...Array.from({ length: 9 }, (_, i) => [i * PAGE_SIZE, PAGE_SIZE, true]), [90, 5, false]],
    );
    assert.deepEqual(result.failed, []);
    const sent = requests();
    assert.ok(sent.length >= 10 && sent.length <= 10 + 3, `${sent.length} requests`);
    // A request aborted on its way past the end may not have reached the service: its permit is spent all the same.
    assert.ok(result.permitsUsed >= sent.length && result.permitsUsed <= 13, `${result.permitsUsed} permits`);
    // Pages fetched past the last one are not staged: one chunk of the ten pages, no page file.
    assert.deepEqual(await stagedFiles('whole'), [
      stagedChunkName({ blockOffset: 0, attempt: 1, firstOffset: 0, pages: 10 }),
    ]);
  });

  test('heartbeats the pages done from the first, in order: a block whose worker dies loses none of them', async () => {
    await new MockActivityEnvironment().run(fixture.activities.prepareVisitorsExportStaging, 'beats');
    const env = new MockActivityEnvironment();
    const beats: PageBlockProgress[] = [];
    env.on('heartbeat', (details: PageBlockProgress) => beats.push(details));
    const result: PageBlockResult = await env.run(fixture.activities.fetchVisitorsPageBlock, {
      exportKey: 'beats',
      projectId: 'acme',
      dateFrom: '2026-11-01',
      dateTo: '2026-11-02',
      offset: 0,
      limit: PAGE_SIZE,
      concurrency: 3,
      permits: [permits(50)],
    });
    assert.deepEqual(beats[0]?.pages, [], 'a beat at the start');
    assert.deepEqual(beats.at(-1)?.pages, result.pages, 'the last beat reports every page');
    for (const beat of beats) {
      assert.deepEqual(
        beat.pages.map((p) => p.offset),
        beat.pages.map((_, i) => i * PAGE_SIZE),
        'a prefix without gaps',
      );
    }
  });

  test('sends no more requests than it holds permits; the rest of the data is left for the next block', async () => {
    const result = await runBlock('short', { permits: [permits(3)] });
    assert.deepEqual(
      result.pages.map((p) => p.offset),
      [0, 10, 20],
    );
    assert.equal(requests().length, 3);
    assert.equal(result.permitsUsed, 3);
  });

  test('skips permits gone stale: none is spent after its spendBy', async () => {
    const result = await runBlock('stale', { permits: [permits(5, -1_000), permits(2)] });
    assert.equal(requests().length, 2);
    assert.deepEqual(
      result.pages.map((p) => p.offset),
      [0, 10],
    );
    assert.equal(result.permitsUsed, 7, 'the stale ones count as used: the workflow drops them');
    const none = await runBlock('all-stale', { permits: [permits(5, -1_000)] });
    assert.deepEqual(none, { pages: [], failed: [], permitsUsed: 5 });
  });

  test('a failed page is returned for the workflow to retry; the pages around it are not sent again', async () => {
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 20 });
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'rateLimit', retryAfter: { seconds: 2 }, times: 1 });
    const result = await runBlock('failed', { concurrency: 2 });
    assert.equal(result.failed.length, 1);
    const [failure] = result.failed;
    assert.equal(failure?.offset, 0, 'the first request was refused');
    assert.equal(failure?.rateLimited, true);
    assert.equal(failure?.retryAfterMs, 2000);
    assert.doesNotMatch(failure?.message ?? '', new RegExp(fixture.sim.apiKey));
    // Issuing stopped at the failure: the page in flight beside it finished and is kept.
    const succeeded = requests()
      .filter((r) => r.status === 200)
      .map((r) => Number(r.query.offset));
    assert.deepEqual(
      result.pages.map((p) => p.offset),
      succeeded,
    );
    assert.equal(new Set(succeeded).size, succeeded.length);
  });

  test('cancelled mid-block: reports cancellation and stops sending', async () => {
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 300 });
    await new MockActivityEnvironment().run(fixture.activities.prepareVisitorsExportStaging, 'cancelled');
    const env = new MockActivityEnvironment();
    const block = env.run(fixture.activities.fetchVisitorsPageBlock, {
      exportKey: 'cancelled',
      projectId: 'acme',
      dateFrom: '2026-11-01',
      dateTo: '2026-11-02',
      offset: 0,
      limit: PAGE_SIZE,
      concurrency: 2,
      permits: [permits(50)],
    });
    setTimeout(() => env.cancel(), 450);
    await assert.rejects(block, CancelledFailure);
    const sent = requests().length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(requests().length, sent, 'nothing sent after the cancellation');
    assert.ok(sent <= 4, `${sent} requests`);
  });

  describe('chunks', () => {
    /** Pages of 2 rows: the simulator's 95 paths make 48 of them, so a block of 40 permits stops at 40 pages. */
    const SMALL = 2;
    const offsets = (from: number, to: number): number[] =>
      Array.from({ length: to - from }, (_, i) => (from + i) * SMALL);
    /** The chunks of `pages` consecutive pages from page `first` of a block from 0, attempt 1. */
    const chunksFrom = (first: number, pages: number) =>
      Array.from({ length: Math.ceil(pages / 16) }, (_, i) => ({
        blockOffset: 0,
        attempt: 1,
        firstOffset: (first + i * 16) * SMALL,
        pages: Math.min(16, pages - i * 16),
      }));

    test('a block of 40 pages stages 3 chunks of 16, 16 and 8 pages, not 40 page files', async () => {
      const result = await runBlock('chunks', { limit: SMALL, permits: [permits(40)] });
      assert.deepEqual(
        result.pages.map((p) => p.offset),
        offsets(0, 40),
      );
      assert.deepEqual(result.failed, []);
      assert.deepEqual(stagedChunksNow(fixture.exportDir, 'chunks'), chunksFrom(0, 40));
      assert.equal((await stagedFiles('chunks')).length, 3, 'no page file');
    });

    test("a chunk's name carries the block's offset and the activity's attempt", async () => {
      const env = new MockActivityEnvironment({ attempt: 3 });
      await runBlock('attempt', { offset: 20, limit: SMALL, permits: [permits(4)] }, env);
      assert.deepEqual(stagedChunksNow(fixture.exportDir, 'attempt'), [
        { blockOffset: 20, attempt: 3, firstOffset: 20, pages: 4 },
      ]);
    });

    test('heartbeats report only the pages whose chunk is written', async () => {
      const env = new MockActivityEnvironment();
      const beats: { reported: number[]; written: number[] }[] = [];
      env.on('heartbeat', (details: PageBlockProgress) => {
        // The emitter calls back at once: the chunks on disk as the beat leaves.
        const written = offsetsIn(stagedChunksNow(fixture.exportDir, 'beats-chunks'), SMALL);
        beats.push({ reported: details.pages.map((p) => p.offset), written });
      });
      const result = await runBlock('beats-chunks', { limit: SMALL, permits: [permits(40)] }, env);
      assert.equal(result.pages.length, 40);
      for (const { reported, written } of beats) {
        assert.ok([0, 16, 32, 40].includes(reported.length), `a beat of ${reported.length} pages`);
        for (const offset of reported)
          assert.ok(written.includes(offset), `page ${offset} reported unwritten`);
      }
      assert.ok(
        beats.some((beat) => beat.reported.length === 16),
        'a beat after the first chunk',
      );
      assert.deepEqual(beats.at(-1)?.reported, offsets(0, 40));
    });

    test('a page that fails in the middle ends a chunk; the pages after it form their own; it is returned failed', async () => {
      const docsApi = failingAt(fixture.sim, 20 * SMALL, 50);
      try {
        const activities = createVisitorsExportActivities({
          docsApi,
          exportDir: fixture.exportDir,
          chunkWaitMs: Infinity,
        });
        const result = await runBlock(
          'split',
          { limit: SMALL, permits: [permits(40)] },
          undefined,
          activities,
        );
        assert.deepEqual(
          result.failed.map((f) => [f.offset, f.rateLimited]),
          [[20 * SMALL, false]],
        );
        const after = result.pages.length - 20;
        assert.ok(after > 0, 'the pages fetched beside the failure are kept');
        assert.deepEqual(
          result.pages.map((p) => p.offset),
          [...offsets(0, 20), ...offsets(21, 21 + after)],
        );
        assert.deepEqual(stagedChunksNow(fixture.exportDir, 'split'), [
          ...chunksFrom(0, 16),
          ...chunksFrom(16, 4),
          ...chunksFrom(21, after),
        ]);
      } finally {
        await docsApi.close();
      }
    });

    test('a chunk whose write fails returns its pages as failed; the others are done', async () => {
      await new MockActivityEnvironment().run(fixture.activities.prepareVisitorsExportStaging, 'unwritable');
      // A directory where the second chunk goes: its rename fails (EISDIR), as a refused write would.
      const second = stagedChunkName({ blockOffset: 0, attempt: 1, firstOffset: 16 * SMALL, pages: 16 });
      await fs.mkdir(`${stagingDirectory(fixture.exportDir, 'unwritable')}/${second}`);
      const result = await runBlock('unwritable', { limit: SMALL, permits: [permits(40)] });
      assert.deepEqual(
        result.failed.map((f) => f.offset),
        offsets(16, 32),
      );
      assert.match(result.failed[0]?.message ?? '', /EISDIR/);
      const done = result.pages.map((p) => p.offset);
      assert.deepEqual(done, [...offsets(0, 16), ...offsets(32, 32 + done.length - 16)]);
      // Each page returned done is in a chunk written, and no page of the failed one is.
      const written = stagedChunksNow(fixture.exportDir, 'unwritable').filter(
        (c) => c.firstOffset !== 16 * SMALL,
      );
      assert.deepEqual(offsetsIn(written, SMALL), done);
    });
  });
});
