import { settle } from '../../helpers/workflow-context';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { CancellationScope } from '@temporalio/workflow';
import { DocsApiFailureType } from '../../../src/contract/failure-types';
import type { PageSummary } from '../../../src/activities/visitors-export';
import { VisitorsExportFailureType } from '../../../src/contract/visitors-export';
import {
  PageWindow,
  type PageWindowOptions,
  type PageWindowOutcome,
} from '../../../src/workflows/visitors-export/page-window';
import { activityFailed } from '../../helpers/temporal-failures';

const PAGE_SIZE = 100;

/** The pages as the fetch activity would deliver them: each request waits until the test answers it. */
class Pages {
  readonly requested: number[] = [];
  readonly cancelled: number[] = [];
  readonly #waiting = new Map<number, { resolve(page: PageSummary): void; reject(error: Error): void }>();

  readonly fetchPage = (offset: number): Promise<PageSummary> => {
    this.requested.push(offset);
    return new Promise((resolve, reject) => {
      this.#waiting.set(offset, { resolve, reject });
      CancellationScope.current().cancelRequested.catch((error: Error) => {
        if (!this.#waiting.delete(offset)) return;
        this.cancelled.push(offset);
        reject(error);
      });
    });
  };

  answer(offset: number, rows: number, hasMore: boolean): Promise<void> {
    this.#take(offset).resolve({ offset, rows, hasMore, totals: { human: rows, ai: 0, total: rows } });
    return settle();
  }

  fail(offset: number, error: Error): Promise<void> {
    this.#take(offset).reject(error);
    return settle();
  }

  #take(offset: number) {
    const waiting = this.#waiting.get(offset);
    assert.ok(
      waiting,
      `page ${offset} is not in flight (in flight: ${[...this.#waiting.keys()].join(', ')})`,
    );
    this.#waiting.delete(offset);
    return waiting;
  }
}

interface Run {
  window: PageWindow;
  pages: Pages;
  /** Offsets handed to onPage, in the order they were. */
  counted: number[];
  outcome(): PageWindowOutcome | undefined;
  error(): unknown;
}

async function startWindow(options: Partial<PageWindowOptions> = {}): Promise<Run> {
  const pages = new Pages();
  const counted: number[] = [];
  const window = new PageWindow({
    firstOffset: 0,
    pageSize: PAGE_SIZE,
    concurrency: 3,
    fetchPage: pages.fetchPage,
    shouldPause: () => false,
    onPage: (page) => counted.push(page.offset),
    onChange: () => undefined,
    ...options,
  });
  let outcome: PageWindowOutcome | undefined;
  let error: unknown;
  void window.run().then(
    (value) => (outcome = value),
    (reason: unknown) => (error = reason),
  );
  await settle();
  return { window, pages, counted, outcome: () => outcome, error: () => error };
}

describe('PageWindow', () => {
  test('keeps `concurrency` pages in flight over offsets 0, L, 2L… and counts them in offset order', async () => {
    const run = await startWindow({ concurrency: 3 });
    assert.deepEqual(run.pages.requested, [0, 100, 200]);

    await run.pages.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.counted, [], 'page 100 waits for page 0');
    assert.deepEqual(run.pages.requested, [0, 100, 200, 300], 'a settled page makes room for the next');

    await run.pages.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.counted, [0, 100]);
    assert.deepEqual(run.pages.requested, [0, 100, 200, 300, 400]);
    assert.equal(run.window.inFlight, 3);
    assert.equal(run.outcome(), undefined);
  });

  test('ends at the first page without more: pages beyond it are cancelled and never counted', async () => {
    const run = await startWindow({ concurrency: 4 });
    await run.pages.answer(0, PAGE_SIZE, true);
    await run.pages.answer(100, 40, false);

    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(run.counted, [0, 100]);
    assert.deepEqual(run.pages.cancelled, [200, 300, 400]);
    assert.equal(run.window.inFlight, 0);
    const beyondEnd = run.pages.requested.filter((offset) => offset > 100);
    assert.ok(beyondEnd.length <= 4 - 1, `at most concurrency - 1 wasted requests: ${beyondEnd.join(', ')}`);
  });

  test('an empty page ends the export even when it says there is more', async () => {
    const run = await startWindow({ concurrency: 2 });
    await run.pages.answer(0, 0, true);

    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(run.counted, [0]);
    assert.deepEqual(run.pages.cancelled, [100]);
  });

  test('an end found out of order waits for the pages before it and issues nothing past it', async () => {
    const run = await startWindow({ concurrency: 3 });
    await run.pages.answer(200, 10, false);
    assert.equal(run.outcome(), undefined);
    assert.deepEqual(run.pages.requested, [0, 100, 200], 'no page past the end is issued');

    await run.pages.answer(100, PAGE_SIZE, true);
    await run.pages.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(run.counted, [0, 100, 200]);
    assert.deepEqual(run.pages.cancelled, []);
  });

  test('slow start: one page, then the next known page and one ahead; at most one request past the end', async () => {
    const run = await startWindow({ concurrency: 8, slowStart: true });
    assert.deepEqual(run.pages.requested, [0]);
    await run.pages.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.pages.requested, [0, 100, 200]);
    await run.pages.answer(100, 30, false);
    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(run.pages.cancelled, [200], 'the one request past the end');
  });

  test('slow start opens to `concurrency` ahead of a full page while aheadOfFullPage says so', async () => {
    let ahead = 2;
    const run = await startWindow({ concurrency: 5, slowStart: true, aheadOfFullPage: () => ahead });
    await run.pages.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.pages.requested, [0, 100, 200], 'a binding budget: one ahead');
    ahead = 5;
    await run.pages.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.pages.requested, [0, 100, 200, 300, 400, 500, 600], 'concurrency pages in flight');
    ahead = 2;
    await run.pages.answer(200, PAGE_SIZE, true);
    assert.deepEqual(run.pages.requested, [0, 100, 200, 300, 400, 500, 600], 'narrow again: nothing new');
    await run.pages.answer(300, 10, false);
    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(
      run.pages.cancelled,
      [400, 500, 600],
      'three past the last page: at most concurrency - 1',
    );
  });

  test('a pause stops issuing, counts every page already issued and returns with nothing in flight', async () => {
    let pauseDue = false;
    const run = await startWindow({ concurrency: 2, shouldPause: () => pauseDue });
    pauseDue = true;
    await run.pages.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.pages.requested, [0, 100], 'no page issued once the pause is due');
    assert.equal(run.outcome(), undefined, 'page 100 is still in flight');

    await run.pages.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.outcome(), { kind: 'paused' });
    assert.deepEqual(run.counted, [0, 100]);
    assert.equal(run.window.inFlight, 0);
  });

  test('a continued run starts at firstOffset and issues its first page even when a pause is already due', async () => {
    const run = await startWindow({ firstOffset: 700, concurrency: 3, shouldPause: () => true });
    assert.deepEqual(run.pages.requested, [700]);

    await run.pages.answer(700, PAGE_SIZE, true);
    assert.deepEqual(run.outcome(), { kind: 'paused' });
    assert.deepEqual(run.counted, [700]);
  });

  test('a needed page that fails ends the window with VisitorsExportPageFailed, after cancelling the rest', async () => {
    const run = await startWindow({ concurrency: 3 });
    const forbidden = ApplicationFailure.create({
      message: 'getVisitors: forbidden | HTTP 403',
      type: DocsApiFailureType.auth,
    });
    await run.pages.fail(100, activityFailed(forbidden, 'fetchVisitorsPage'));
    assert.deepEqual(run.pages.requested, [0, 100, 200], 'nothing issued after a failure');
    assert.equal(run.error(), undefined, 'page 0 is still needed first');

    await run.pages.answer(0, PAGE_SIZE, true);
    const error = run.error();
    assert.ok(error instanceof ApplicationFailure, String(error));
    assert.equal(error.type, VisitorsExportFailureType.pageFailed);
    assert.equal(error.nonRetryable, true);
    assert.match(error.message, /offset 100 failed: getVisitors: forbidden \| HTTP 403/);
    assert.equal(
      (error.cause as ApplicationFailure | undefined)?.type,
      DocsApiFailureType.auth,
      'the service error is the cause',
    );
    assert.deepEqual(run.counted, [0]);
    assert.deepEqual(run.pages.cancelled, [200]);
    assert.equal(run.window.inFlight, 0);
  });

  test('a page past the end that fails is ignored', async () => {
    const run = await startWindow({ concurrency: 3 });
    await run.pages.fail(200, activityFailed(new Error('boom'), 'fetchVisitorsPage'));
    await run.pages.answer(0, PAGE_SIZE, true);
    await run.pages.answer(100, 5, false);

    assert.equal(run.error(), undefined);
    assert.deepEqual(run.outcome(), { kind: 'end' });
    assert.deepEqual(run.counted, [0, 100]);
  });
});
