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
import { stagingDirectory } from '../../src/exports/layout';
import { useExportActivities } from '../helpers/export-activities';

const fixture = useExportActivities(95);

const PAGE_SIZE = 10;

function permits(count: number, spendInMs = 60_000): PermitSpan {
  return { count, grantedAt: Date.now(), spendBy: Date.now() + spendInMs };
}

async function runBlock(
  exportKey: string,
  overrides: Partial<PageBlockRequest> = {},
): Promise<PageBlockResult> {
  await new MockActivityEnvironment().run(fixture.activities.prepareVisitorsExportStaging, exportKey);
  return new MockActivityEnvironment().run(fixture.activities.fetchVisitorsPageBlock, {
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
  test('fetches up to the last page, stages each, and sends at most concurrency - 1 requests past it', async () => {
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
    const pageFiles = (await stagedFiles('whole')).filter((name) => name.startsWith('page-'));
    assert.ok(pageFiles.length >= 10, `staged ${pageFiles.length}`);
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
});
