import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CHUNK_PAGES,
  CHUNK_WAIT_MS,
  MAX_UNWRITTEN_PAGES,
  PageChunks,
  type FetchedPage,
} from '../../src/activities/page-block-chunks';
import type { PageSummary } from '../../src/activities/visitors-export';

const fetched = (index: number): FetchedPage => ({
  index,
  page: { visitors: [], hasMore: true, totals: { human: 0, ai: 0, total: 0 } },
  grantedAt: 0,
});
const summary = ({ index }: FetchedPage): PageSummary => ({
  offset: index,
  rows: 0,
  hasMore: true,
  totals: { human: 0, ai: 0, total: 0 },
});

/** PageChunks whose writes wait for `release` (all of them: true); records the chunks as index ranges. */
function chunks(failed = new Set<number>(), refuse = new Set<number>()) {
  const writes: string[] = [];
  const done: number[] = [];
  const lost: number[] = [];
  let release: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (release = resolve));
  const staged = new PageChunks({
    async write(pages) {
      writes.push(`${pages[0]?.index}-${pages.at(-1)?.index}`);
      await held;
      if (refuse.has(pages[0]?.index ?? -1)) throw new Error('refused');
      return pages.map(summary);
    },
    written: (pages) => done.push(...pages.map((page) => page.index)),
    failed: (pages) => lost.push(...pages.map((page) => page.index)),
    isFailed: (index) => failed.has(index),
  });
  return {
    staged,
    writes,
    done,
    lost,
    release() {
      release();
      held = Promise.resolve();
    },
  };
}

describe('PageChunks', () => {
  test('a chunk goes as soon as 16 consecutive pages are in, whatever order they came in', async () => {
    const { staged, writes, done, release } = chunks();
    for (let index = CHUNK_PAGES - 1; index >= 1; index -= 1) staged.add(fetched(index));
    staged.add(fetched(CHUNK_PAGES + 1));
    assert.deepEqual(writes, [], 'page 0 is missing: nothing goes');
    staged.add(fetched(0));
    assert.deepEqual(writes, ['0-15']);
    assert.equal(staged.unwritten, CHUNK_PAGES + 1);
    release();
    await staged.finish(true);
    assert.deepEqual(writes, ['0-15'], 'page 16 never came: page 17 is not written after a gap');
    assert.deepEqual(
      done,
      Array.from({ length: 16 }, (_, i) => i),
    );
  });

  test('a shorter run goes once its first page has waited CHUNK_WAIT_MS: slow pages are staged as they come', async () => {
    const { staged, writes, done, release } = chunks();
    release();
    for (let index = 0; index < 3; index += 1) staged.add(fetched(index));
    staged.add(fetched(4));
    assert.deepEqual(writes, [], 'a young run waits for more pages');
    await new Promise((resolve) => setTimeout(resolve, CHUNK_WAIT_MS + 100));
    assert.deepEqual(writes, ['0-2'], 'the run from the first page not staged, up to the gap');
    assert.deepEqual(done, [0, 1, 2]);
    staged.add(fetched(3));
    assert.deepEqual(writes, ['0-2'], 'page 4 waited long, but the run from page 3 is new');
    await new Promise((resolve) => setTimeout(resolve, CHUNK_WAIT_MS + 100));
    assert.deepEqual(writes, ['0-2', '3-4']);
    await staged.finish(true);
    assert.deepEqual(writes, ['0-2', '3-4'], 'nothing left to write at the end');
  });

  test('at the end, the runs on either side of a failed page are written, 16 pages at most each', async () => {
    const { staged, writes, release } = chunks(new Set([20]));
    for (let index = 0; index < 40; index += 1) if (index !== 20) staged.add(fetched(index));
    release();
    await staged.finish(true);
    assert.deepEqual(writes, ['0-15', '16-19', '21-36', '37-39']);
  });

  test('a chunk whose write fails makes its pages failed, not done', async () => {
    const { staged, done, lost, release } = chunks(new Set(), new Set([16]));
    for (let index = 0; index < 20; index += 1) staged.add(fetched(index));
    release();
    await staged.finish(true);
    assert.deepEqual(lost, [16, 17, 18, 19]);
    assert.equal(done.length, 16);
  });

  test('pages past the last page of the data are dropped; a cancelled block writes nothing more', async () => {
    const ended = chunks();
    for (let index = 0; index < 6; index += 1) ended.staged.add(fetched(index));
    ended.staged.dropAfter(3);
    ended.release();
    await ended.staged.finish(true);
    assert.deepEqual(ended.writes, ['0-3']);

    const cancelled = chunks();
    cancelled.staged.add(fetched(0));
    await cancelled.staged.finish(false);
    assert.deepEqual(cancelled.writes, []);
  });

  test('lanes wait for room while MAX_UNWRITTEN_PAGES pages are held, and go on as writes end', async () => {
    const { staged, release } = chunks();
    for (let index = 1; index <= MAX_UNWRITTEN_PAGES; index += 1) staged.add(fetched(index));
    let waited = false;
    const room = staged.room(() => false).then(() => (waited = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(waited, false, 'page 0 holds every chunk back');
    let stop = false;
    const stopped = staged.room(() => stop);
    stop = true;
    staged.changed();
    await stopped; // a lane that must stop is not kept waiting
    staged.add(fetched(0));
    release();
    await room;
    assert.ok(staged.unwritten < MAX_UNWRITTEN_PAGES);
    await staged.finish(true);
  });
});
