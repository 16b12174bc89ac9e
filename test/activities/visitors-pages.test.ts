import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createVisitorsPagesActivities,
  type PageRunProgress,
  type PageRunRequest,
  type PageRunResult,
} from '../../src/activities/visitors-pages';
import { stagedChunkName } from '../../src/exports/layout';
import { LocalDestination } from '../../src/exports/local-destination';
import { ExportStaging } from '../../src/exports/destination';
import { useExportActivities } from '../helpers/export-activities';
import { stagingDirectory } from '../helpers/export-paths';
import { DocsApiClient, type RequestOptions, type VisitorsQuery } from '../../src/docs-api/client';
import { docsApiFailure } from '../../src/docs-api/failures';
import { failingAt, offsetsNamed } from '../helpers/staged-chunks';

// 95 paths: pages of 10 rows at offsets 0..90, the last one (90) with 5 rows and no more.
const fixture = useExportActivities(95);
const range = { projectId: 'acme', dateFrom: '2026-11-01', dateTo: '2026-11-02' };

function runRequest(
  exportKey: string,
  offset: number,
  permits: number,
  grantedAt = Date.now(),
): PageRunRequest {
  return {
    exportKey,
    ...range,
    offset,
    limit: 10,
    permits: [{ count: permits, grantedAt, spendBy: grantedAt + 60_000 }],
    attempt: 1,
  };
}

async function prepared(exportKey: string): Promise<void> {
  await new MockActivityEnvironment().run(fixture.activities.prepareVisitorsExportStaging, exportKey);
}

const requestedOffsets = (): number[] =>
  fixture.sim
    .requests()
    .filter((r) => r.route === 'getVisitors')
    .map((r) => Number(r.query.offset));

const stagedOffsets = async (exportKey: string): Promise<number[]> =>
  offsetsNamed(await fs.readdir(stagingDirectory(fixture.exportDir, exportKey)), 10).sort((a, b) => a - b);

describe('fetchVisitorsPages', () => {
  test('one request per permit, in offset order; every page staged; counts only, up to the last page', async () => {
    await prepared('k');
    const env = new MockActivityEnvironment();
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const result: PageRunResult = await env.run(
      fixture.activities.fetchVisitorsPages,
      runRequest('k', 60, 8),
    );
    assert.deepEqual(
      result.pages.map((p) => [p.offset, p.rows, p.hasMore]),
      [
        [60, 10, true],
        [70, 10, true],
        [80, 10, true],
        [90, 5, false],
      ],
    );
    // One permit past the last page reads page 0 again for the end check, beside the last pages.
    assert.equal(result.permitsUsed, 5, 'the other permits after the last page are not used');
    assert.equal(result.firstAgain?.offset, 0);
    assert.equal(result.firstAgain?.rows, 10);
    assert.equal(result.stopped, undefined);
    assert.deepEqual(Object.keys(result.pages[0] ?? {}).sort(), [
      'digest',
      'hasMore',
      'offset',
      'rows',
      'totals',
    ]);
    assert.deepEqual(requestedOffsets(), [60, 70, 80, 90, 0]);
    assert.deepEqual(await stagedOffsets('k'), [60, 70, 80, 90]);
    const last = beats.at(-1) as PageRunProgress;
    assert.deepEqual(last.pages, result.pages, 'the last heartbeat reports every page staged');
  });

  test('stops when its permits run out, and skips a permit gone stale without a request', async () => {
    await prepared('short');
    const now = Date.now();
    const result: PageRunResult = await new MockActivityEnvironment().run(
      fixture.activities.fetchVisitorsPages,
      {
        ...runRequest('short', 0, 2),
        permits: [
          { count: 1, grantedAt: now - 10_000, spendBy: now - 1 },
          { count: 2, grantedAt: now, spendBy: now + 60_000 },
        ],
      },
    );
    assert.deepEqual(
      result.pages.map((p) => p.offset),
      [0, 10],
    );
    assert.equal(result.permitsUsed, 3);
    assert.deepEqual(requestedOffsets(), [0, 10]);
  });

  test('a failure of its first page is thrown as the service error; nothing is staged', async () => {
    await prepared('denied');
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'status', status: 403 });
    await assert.rejects(
      new MockActivityEnvironment().run(fixture.activities.fetchVisitorsPages, runRequest('denied', 0, 3)),
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, 'AuthError');
        assert.equal(error.nonRetryable, true);
        return true;
      },
    );
    assert.deepEqual(await stagedOffsets('denied'), []);
    assert.deepEqual(requestedOffsets(), [0], 'no request after the failure');
  });

  test('a 429 on its first page is retryable and carries Retry-After as the next retry delay', async () => {
    await prepared('limited');
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'rateLimit', retryAfter: { seconds: 7 } });
    await assert.rejects(
      new MockActivityEnvironment().run(fixture.activities.fetchVisitorsPages, runRequest('limited', 0, 1)),
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, 'RateLimitedError');
        assert.equal(error.nonRetryable, false);
        assert.equal(error.nextRetryDelay, 7000);
        return true;
      },
    );
  });

  test('a later failure ends the run with the pages before it, and says which request failed', async () => {
    await prepared('later');
    const docsApi = failingAt(fixture.sim, 30, 0);
    try {
      const fetchVisitorsPages = fetchWith(docsApi);
      const grantedAt = Date.now();
      const result: PageRunResult = await new MockActivityEnvironment().run(
        fetchVisitorsPages,
        runRequest('later', 0, 6, grantedAt),
      );
      assert.deepEqual(
        result.pages.map((p) => p.offset),
        [0, 10, 20],
      );
      assert.equal(result.permitsUsed, 4, 'the failed request spent its permit');
      assert.equal(result.stopped?.offset, 30);
      assert.equal(result.stopped?.grantedAt, grantedAt);
      assert.equal(result.stopped?.rateLimited, false);
      assert.match(result.stopped?.message ?? '', /refused by the test/);
      assert.deepEqual(await stagedOffsets('later'), [0, 10, 20]);
    } finally {
      await docsApi.close();
    }
  });

  test('a wide run: `width` requests in flight, pages staged in order, at most width - 1 past the end', async () => {
    await prepared('wide');
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 50 });
    const docsApi = countingInFlight(fixture.sim);
    try {
      const fetchVisitorsPages = fetchWith(docsApi);
      const result: PageRunResult = await new MockActivityEnvironment().run(fetchVisitorsPages, {
        ...runRequest('wide', 0, 14),
        width: 4,
      });
      assert.equal(docsApi.mostInFlight, 4);
      assert.deepEqual(
        result.pages.map((p) => p.offset),
        [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
      );
      assert.equal(result.stopped, undefined);
      const requested = requestedOffsets();
      const pastEnd = requested.filter((offset) => offset > 90);
      assert.ok(pastEnd.length <= 3, `at most width - 1 requests past the last page: ${pastEnd.join(', ')}`);
      assert.equal(result.permitsUsed, requested.length, 'every request spent a permit');
      assert.deepEqual(await stagedOffsets('wide'), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
      const staged = await fs.readdir(stagingDirectory(fixture.exportDir, 'wide'));
      const chunks = staged.filter((name) => name.startsWith('chunk-'));
      assert.ok(chunks.length <= 3, `a chunk per round of 4 pages, not per page: ${chunks.length} chunks`);
    } finally {
      await docsApi.close();
    }
  });

  test('a wide run that fails mid-way returns the pages before the failure and sends nothing after it', async () => {
    await prepared('wide-later');
    const docsApi = failingAt(fixture.sim, 30, 0);
    try {
      const fetchVisitorsPages = fetchWith(docsApi);
      const result: PageRunResult = await new MockActivityEnvironment().run(fetchVisitorsPages, {
        ...runRequest('wide-later', 0, 8),
        width: 4,
      });
      assert.deepEqual(
        result.pages.map((p) => p.offset),
        [0, 10, 20],
      );
      assert.equal(result.stopped?.offset, 30);
      assert.deepEqual(
        requestedOffsets(),
        [0, 10, 20],
        'the simulator saw the pages before the failure only',
      );
      assert.equal(result.permitsUsed, 4, 'the failed request spent its permit, no later one was sent');
      assert.deepEqual(await stagedOffsets('wide-later'), [0, 10, 20]);
    } finally {
      await docsApi.close();
    }
  });

  test('a 429 behind an earlier failure of a wide run is still reported, with its permit and Retry-After', async () => {
    await prepared('wide-429');
    const refusedGrant = Date.now() - 5;
    const servedGrant = Date.now();
    const docsApi = new (class extends DocsApiClient {
      override async getVisitors(projectId: string, query: VisitorsQuery, options?: RequestOptions) {
        if (query.offset === 30) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          throw docsApiFailure('unavailable', 'refused by the test', {
            operation: 'getVisitors',
            status: 503,
          });
        }
        if (query.offset === 40) {
          throw docsApiFailure('rateLimited', 'limited by the test', {
            operation: 'getVisitors',
            status: 429,
            retryAfterMs: 3000,
          });
        }
        return super.getVisitors(projectId, query, options);
      }
    })({ baseUrl: fixture.sim.url, apiKey: fixture.sim.apiKey });
    try {
      const fetchVisitorsPages = fetchWith(docsApi);
      const result: PageRunResult = await new MockActivityEnvironment().run(fetchVisitorsPages, {
        ...runRequest('wide-429', 0, 8),
        permits: [
          { count: 4, grantedAt: servedGrant, spendBy: servedGrant + 60_000 },
          { count: 4, grantedAt: refusedGrant, spendBy: refusedGrant + 60_000 },
        ],
        width: 5,
      });
      assert.deepEqual(
        result.pages.map((p) => p.offset),
        [0, 10, 20],
      );
      assert.equal(result.stopped?.offset, 30, 'the run goes on from the first page it lacks');
      assert.equal(result.stopped?.rateLimited, true, 'the limiter hears of the 429');
      assert.equal(result.stopped?.grantedAt, refusedGrant, 'with the permit the refused request spent');
      assert.equal(result.stopped?.retryAfterMs, 3000);
    } finally {
      await docsApi.close();
    }
  });

  test('a chunk write a passing fault fails is written again from memory: no page is fetched twice', async (t) => {
    await prepared('passing');
    const writeChunk = ExportStaging.prototype.writeChunk;
    let faults = 2;
    t.mock.method(
      ExportStaging.prototype,
      'writeChunk',
      function (this: ExportStaging, ...args: Parameters<typeof writeChunk>) {
        if (faults-- > 0)
          return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
        return writeChunk.apply(this, args);
      },
    );
    const result: PageRunResult = await new MockActivityEnvironment().run(
      fixture.activities.fetchVisitorsPages,
      {
        ...runRequest('passing', 0, 12),
        width: 4,
      },
    );
    assert.equal(result.pages.length, 10);
    assert.equal(result.stopped, undefined);
    const requested = requestedOffsets();
    assert.equal(
      new Set(requested).size,
      requested.length,
      `each page fetched once: ${requested.join(', ')}`,
    );
    assert.deepEqual(await stagedOffsets('passing'), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  test('a chunk write the destination refuses (EISDIR) fails the run at once, pages staged before it or not', async () => {
    await prepared('refused');
    // Page 0 is staged alone; a directory stands at every name a chunk of the later pages can take.
    for (let firstOffset = 10; firstOffset <= 50; firstOffset += 10) {
      for (let pages = 1; pages <= 5; pages += 1) {
        const name = stagedChunkName({ runOffset: 0, attempt: 1, firstOffset, pages });
        await fs.mkdir(path.join(stagingDirectory(fixture.exportDir, 'refused'), name));
      }
    }
    await assert.rejects(
      new MockActivityEnvironment().run(fixture.activities.fetchVisitorsPages, runRequest('refused', 0, 6)),
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, 'ExportDestinationUnavailable');
        assert.equal(error.nonRetryable, true);
        assert.match(
          error.message,
          /^export directory \S+ cannot be written \(EISDIR: rename \.staging\/\S+\/chunk-/,
        );
        return true;
      },
    );
    const entries = await fs.readdir(stagingDirectory(fixture.exportDir, 'refused'), { withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
    assert.deepEqual(offsetsNamed(files, 10), [0], 'page 0 was staged before the refusal');
    const requested = requestedOffsets();
    assert.equal(
      new Set(requested).size,
      requested.length,
      `each page fetched once: ${requested.join(', ')}`,
    );
  });

  test('a run whose export was cleaned up fails non-retryable ExportStagingMissing, leaving nothing', async () => {
    await assert.rejects(
      new MockActivityEnvironment().run(fixture.activities.fetchVisitorsPages, runRequest('cleaned', 0, 2)),
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, 'ExportStagingMissing');
        assert.equal(error.nonRetryable, true);
        return true;
      },
    );
    assert.deepEqual(await fs.readdir(fixture.exportDir), []);
  });

  test('a run cancelled while a request is in flight reports cancellation and stages nothing', async () => {
    await prepared('cancelled');
    fixture.sim.faults.add({ route: 'getVisitors', kind: 'latency', latencyMs: 5000 });
    const env = new MockActivityEnvironment();
    const run = env.run(fixture.activities.fetchVisitorsPages, runRequest('cancelled', 0, 3));
    setTimeout(() => env.cancel(), 200);
    await assert.rejects(run, CancelledFailure);
    assert.deepEqual(await stagedOffsets('cancelled'), []);
  });
});

/** A client of the simulator that records the most getVisitors requests it had in flight at once. */
function countingInFlight(sim: { url: string; apiKey: string }) {
  return new (class extends DocsApiClient {
    inFlight = 0;
    mostInFlight = 0;
    override async getVisitors(projectId: string, query: VisitorsQuery, options?: RequestOptions) {
      this.inFlight += 1;
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      try {
        return await super.getVisitors(projectId, query, options);
      } finally {
        this.inFlight -= 1;
      }
    }
  })({ baseUrl: sim.url, apiKey: sim.apiKey });
}

/** The page activity over `docsApi` (a client of the test's making), staging where the fixture's does. */
function fetchWith(docsApi: DocsApiClient) {
  return createVisitorsPagesActivities(
    docsApi,
    (key) => new ExportStaging(new LocalDestination(fixture.exportDir), key),
  ).fetchVisitorsPages;
}
