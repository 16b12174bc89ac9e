import { settle } from '../../helpers/workflow-context';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { CancellationScope } from '@temporalio/workflow';
import { DocsApiFailureType } from '../../../src/contract/failure-types';
import type { PageSummary } from '../../../src/activities/visitors-pages';
import { VisitorsExportFailureType } from '../../../src/contract/visitors-export';
import {
  PageWindow,
  type PageWindowOptions,
  type PageWindowOutcome,
} from '../../../src/workflows/visitors-export/page-window';
import { pageFailed } from '../../../src/workflows/visitors-export/failures';
import { activityFailed } from '../../helpers/temporal-failures';

const PAGE_SIZE = 100;

/** The runs as fetchPageRun would deliver them: each waits until the test answers it. */
class Runs {
  /** Each run asked for: its first offset and pages. */
  readonly requested: [number, number][] = [];
  /** Requests each run sends at once, by its first offset. */
  readonly widths = new Map<number, number>();
  readonly cancelled: number[] = [];
  readonly #waiting = new Map<number, { resolve(pages: PageSummary[]): void; reject(error: Error): void }>();

  readonly fetchRun = (offset: number, pages: number, width: number): Promise<PageSummary[]> => {
    this.requested.push([offset, pages]);
    this.widths.set(offset, width);
    return new Promise((resolve, reject) => {
      this.#waiting.set(offset, { resolve, reject });
      CancellationScope.current().cancelRequested.catch((error: Error) => {
        if (!this.#waiting.delete(offset)) return;
        this.cancelled.push(offset);
        reject(error);
      });
    });
  };

  /** The first offsets of the runs asked for. */
  get offsets(): number[] {
    return this.requested.map(([offset]) => offset);
  }

  /** Answers the run at `offset` with one page. */
  answer(offset: number, rows: number, hasMore: boolean): Promise<void> {
    return this.answerRun(offset, [[rows, hasMore]]);
  }

  /** Answers the run at `offset` with consecutive pages of these rows and hasMore. */
  answerRun(offset: number, pages: [number, boolean][]): Promise<void> {
    this.#take(offset).resolve(
      pages.map(([rows, hasMore], i) => ({
        offset: offset + i * PAGE_SIZE,
        rows,
        hasMore,
        totals: { human: rows, ai: 0, total: rows },
        digest: `d${offset + i * PAGE_SIZE}`,
      })),
    );
    return settle();
  }

  fail(offset: number, error: Error): Promise<void> {
    this.#take(offset).reject(error);
    return settle();
  }

  #take(offset: number) {
    const waiting = this.#waiting.get(offset);
    assert.ok(waiting, `run ${offset} is not in flight (in flight: ${[...this.#waiting.keys()].join(', ')})`);
    this.#waiting.delete(offset);
    return waiting;
  }
}

interface Run {
  window: PageWindow;
  runs: Runs;
  /** Offsets handed to onPage, in the order they were. */
  counted: number[];
  outcome(): PageWindowOutcome | undefined;
  error(): unknown;
}

/** A window whose budget has room unless `hasRoom` says otherwise, with runs of one page unless `runPages` does. */
async function startWindow(options: Partial<PageWindowOptions> = {}): Promise<Run> {
  const runs = new Runs();
  const counted: number[] = [];
  const window = new PageWindow({
    firstOffset: 0,
    pageSize: PAGE_SIZE,
    concurrency: 3,
    hasRoom: () => true,
    runPages: () => 1,
    runWidth: () => 1,
    fetchRun: runs.fetchRun,
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
  return { window, runs, counted, outcome: () => outcome, error: () => error };
}

describe('PageWindow', () => {
  test('the first page goes alone; with room, `concurrency` runs in flight, counted in offset order', async () => {
    const run = await startWindow({ concurrency: 3 });
    assert.deepEqual(run.runs.offsets, [0]);
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300]);

    await run.runs.answer(200, PAGE_SIZE, true);
    assert.deepEqual(run.counted, [0], 'page 200 waits for page 100');
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300, 400], 'a settled run makes room for the next');

    await run.runs.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.counted, [0, 100, 200]);
    assert.equal(run.window.inFlight, 3);
    assert.equal(run.outcome(), undefined);
  });

  test('runs of several pages: each covers the next offsets, and its pages are counted in order', async () => {
    const run = await startWindow({ concurrency: 2, runPages: () => 3 });
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.requested, [
      [0, 1],
      [100, 3],
      [400, 3],
    ]);
    await run.runs.answerRun(400, [
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
    ]);
    assert.deepEqual(run.counted, [0]);
    await run.runs.answerRun(100, [
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
    ]);
    assert.deepEqual(run.counted, [0, 100, 200, 300, 400, 500, 600]);
    assert.deepEqual(run.runs.offsets, [0, 100, 400, 700, 1000]);

    await run.runs.answerRun(700, [
      [PAGE_SIZE, true],
      [20, false],
    ]);
    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(run.counted, [0, 100, 200, 300, 400, 500, 600, 700, 800]);
    assert.deepEqual(run.runs.cancelled, [1000], 'the run past the end');
  });

  test('wide runs share the concurrency: requests in flight over every run stay within it', async () => {
    const run = await startWindow({ concurrency: 4, runPages: () => 6, runWidth: () => 4 });
    assert.deepEqual(run.runs.requested, [[0, 1]]);
    assert.equal(run.runs.widths.get(0), 1, 'the first page goes alone');
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.requested, [
      [0, 1],
      [100, 6],
    ]);
    assert.equal(run.runs.widths.get(100), 4, 'one run takes every lane: no second run beside it');
    await run.runs.answerRun(100, [
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
      [30, false],
    ]);
    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(run.counted, [0, 100, 200, 300]);
  });

  test('a binding budget makes every run one page wide, whatever runWidth says', async () => {
    const run = await startWindow({ concurrency: 4, hasRoom: () => false, runWidth: () => 4 });
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.ok(run.runs.requested.length > 1);
    assert.ok([...run.runs.widths.values()].every((width) => width === 1));
  });

  test('ends at the first page without more: runs beyond it are cancelled and never counted', async () => {
    const run = await startWindow({ concurrency: 4 });
    await run.runs.answer(0, PAGE_SIZE, true);
    await run.runs.answer(100, 40, false);

    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(run.counted, [0, 100]);
    assert.deepEqual(run.runs.cancelled, [200, 300, 400]);
    assert.equal(run.window.inFlight, 0);
    const beyondEnd = run.runs.offsets.filter((offset) => offset > 100);
    assert.ok(beyondEnd.length <= 4 - 1, `at most concurrency - 1 wasted requests: ${beyondEnd.join(', ')}`);
  });

  test('an empty page that says hasMore does not end the window; a page past the end with rows is reported', async () => {
    const run = await startWindow({ concurrency: 2 });
    await run.runs.answer(0, PAGE_SIZE, true);
    await run.runs.answer(100, 0, true);
    await run.runs.answer(300, PAGE_SIZE, true);
    await run.runs.answer(200, PAGE_SIZE, false);

    const outcome = run.outcome();
    assert.equal(outcome?.kind, 'end');
    assert.deepEqual(run.counted, [0, 100, 200]);
    assert.equal(outcome.kind === 'end' ? outcome.last.offset : undefined, 200);
    assert.equal(outcome.kind === 'end' ? outcome.pastEnd?.offset : undefined, 300);
  });

  test('an end found out of order waits for the pages before it and issues nothing past it', async () => {
    const run = await startWindow({ concurrency: 3 });
    await run.runs.answer(0, PAGE_SIZE, true);
    await run.runs.answer(300, 10, false);
    assert.equal(run.outcome(), undefined);
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300], 'no run past the end is issued');

    await run.runs.answer(200, PAGE_SIZE, true);
    await run.runs.answer(100, PAGE_SIZE, true);
    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(run.counted, [0, 100, 200, 300]);
    assert.deepEqual(run.runs.cancelled, []);
  });

  test('a binding budget: one page, then the next known page and one ahead; one request past the end', async () => {
    const run = await startWindow({ concurrency: 8, hasRoom: () => false, runPages: () => 16 });
    assert.deepEqual(run.runs.requested, [[0, 1]]);
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.requested, [
      [0, 1],
      [100, 1],
      [200, 1],
    ]);
    await run.runs.answer(100, 30, false);
    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(run.runs.cancelled, [200], 'the one request past the end');
  });

  test('the window opens to `concurrency` runs while the budget has room, and narrows when it binds', async () => {
    let room = false;
    const run = await startWindow({ concurrency: 5, hasRoom: () => room });
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200], 'a binding budget: one ahead');
    room = true;
    await run.runs.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300, 400, 500, 600], 'concurrency runs in flight');
    room = false;
    await run.runs.answer(200, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300, 400, 500, 600], 'narrow again: nothing new');
    await run.runs.answer(300, 10, false);
    assert.equal(run.outcome()?.kind, 'end');
    assert.deepEqual(
      run.runs.cancelled,
      [400, 500, 600],
      'three past the last page: at most concurrency - 1',
    );
  });

  test('a pause stops issuing, counts every run already issued and returns with nothing in flight', async () => {
    let pauseDue = false;
    const run = await startWindow({ concurrency: 2, shouldPause: () => pauseDue });
    await run.runs.answer(0, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200]);
    pauseDue = true;
    await run.runs.answer(100, PAGE_SIZE, true);
    assert.deepEqual(run.runs.offsets, [0, 100, 200], 'no run issued once the pause is due');
    assert.equal(run.outcome(), undefined, 'run 200 is still in flight');

    await run.runs.answer(200, PAGE_SIZE, true);
    assert.deepEqual(run.outcome(), { kind: 'paused' });
    assert.deepEqual(run.counted, [0, 100, 200]);
    assert.equal(run.window.inFlight, 0);
  });

  test('a continued run starts at firstOffset and issues its first page even when a pause is already due', async () => {
    const run = await startWindow({ firstOffset: 700, concurrency: 3, shouldPause: () => true });
    assert.deepEqual(run.runs.offsets, [700]);

    await run.runs.answer(700, PAGE_SIZE, true);
    assert.deepEqual(run.outcome(), { kind: 'paused' });
    assert.deepEqual(run.counted, [700]);
  });

  test('a needed run that fails ends the window with VisitorsExportPageFailed, after cancelling the rest', async () => {
    const run = await startWindow({ concurrency: 3 });
    await run.runs.answer(0, PAGE_SIZE, true);
    const forbidden = ApplicationFailure.create({
      message: 'getVisitors: forbidden | HTTP 403',
      type: DocsApiFailureType.auth,
    });
    await run.runs.fail(200, activityFailed(forbidden, 'fetchVisitorsPages'));
    assert.deepEqual(run.runs.offsets, [0, 100, 200, 300], 'nothing issued after a failure');
    assert.equal(run.error(), undefined, 'page 100 is still needed first');

    await run.runs.answer(100, PAGE_SIZE, true);
    const error = run.error();
    assert.ok(error instanceof ApplicationFailure, String(error));
    assert.equal(error.type, VisitorsExportFailureType.pageFailed);
    assert.equal(error.nonRetryable, true);
    assert.match(error.message, /offset 200 failed: getVisitors: forbidden \| HTTP 403/);
    assert.equal(
      (error.cause as ApplicationFailure | undefined)?.type,
      DocsApiFailureType.auth,
      'the service error is the cause',
    );
    assert.deepEqual(run.counted, [0, 100]);
    assert.deepEqual(run.runs.cancelled, [300]);
    assert.equal(run.window.inFlight, 0);
  });

  test('a run that failed naming its page keeps that failure; one past the end is ignored', async () => {
    const named = pageFailed(500, new Error('boom'));
    const failing = await startWindow({ concurrency: 2, runPages: () => 4 });
    await failing.runs.answer(0, PAGE_SIZE, true);
    await failing.runs.fail(100, named);
    assert.equal(failing.error(), named);

    const past = await startWindow({ concurrency: 3 });
    await past.runs.answer(0, PAGE_SIZE, true);
    await past.runs.fail(300, activityFailed(new Error('boom'), 'fetchVisitorsPages'));
    await past.runs.answer(100, PAGE_SIZE, true);
    await past.runs.answer(200, 5, false);
    assert.equal(past.error(), undefined);
    assert.equal(past.outcome()?.kind, 'end');
    assert.deepEqual(past.counted, [0, 100, 200]);
  });
});
