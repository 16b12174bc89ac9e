import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvariantError } from '../../src/contract/errors';
import type { VisitorRow } from '../../src/contract/visitors-export';
import { stagedChunkName } from '../../src/exports/layout';
import { chunkText, parseChunk, resolveStagedPages, type StagedSource } from '../../src/exports/destination';

const PAGE = 10;
const offsetsUpTo = (pages: number): number[] => Array.from({ length: pages }, (_, i) => i * PAGE);
/** A chunk of `pages` pages from page index `first`, written by the run at page index `run`. */
const chunk = (run: number, attempt: number, first: number, pages: number): string =>
  stagedChunkName({ runOffset: run * PAGE, attempt, firstOffset: first * PAGE, pages });
/** A lone page: a one-page chunk of the run that starts there. */
const page = (index: number, attempt = 1): string => chunk(index, attempt, index, 1);

/** Each offset's object, as `name@position`, for a compact comparison. */
function objectsOf(names: string[], pages: number): string[] {
  const staged = resolveStagedPages(names, offsetsUpTo(pages));
  assert.ok(staged.found, `missing ${staged.found ? '' : staged.missing.join(', ')}`);
  staged.sources.forEach((source: StagedSource, index) => assert.equal(source.offset, index * PAGE));
  return staged.sources.map((source) => `${source.object}@${source.position}`);
}

const repeat = (times: number, make: (i: number) => string): string[] =>
  Array.from({ length: times }, (_, i) => make(i));

describe('resolveStagedPages: which chunk holds a page', () => {
  test("stray chunks of a run whose worker died lose to the next run's, from the first page not counted", () => {
    // Run 0 wrote chunks 0-15 and 16-31, but its last heartbeat reached the server with pages 0-15 only: the
    // workflow counted those and started a run at page 16, which wrote 16-31 and 32-39.
    const names = [chunk(0, 1, 0, 16), chunk(0, 1, 16, 16), chunk(16, 1, 16, 16), chunk(16, 1, 32, 8)];
    assert.deepEqual(objectsOf(names, 40), [
      ...repeat(16, (i) => `${chunk(0, 1, 0, 16)}@${i}`),
      ...repeat(16, (i) => `${chunk(16, 1, 16, 16)}@${i}`),
      ...repeat(8, (i) => `${chunk(16, 1, 32, 8)}@${i}`),
    ]);
  });

  test('a chunk whose write failed late (the object is there) loses to the run that fetched its pages again', () => {
    const names = [chunk(0, 1, 0, 4), chunk(0, 1, 4, 4), ...repeat(4, (i) => page(4 + i))];
    assert.deepEqual(objectsOf(names, 8), [
      ...repeat(4, (i) => `${chunk(0, 1, 0, 4)}@${i}`),
      ...repeat(4, (i) => `${page(4 + i)}@0`),
    ]);
  });

  test('a run started again at the same offset wins over the attempt before it, and a later run over both', () => {
    // Attempt 1 died with no heartbeat after writing 0-15 and 16-31; attempt 2 wrote 0-15 and 16-23 and ended
    // there (its permits ran out); the next run from 24.
    const names = [
      chunk(0, 1, 0, 16),
      chunk(0, 1, 16, 16),
      chunk(0, 2, 0, 16),
      chunk(0, 2, 16, 8),
      chunk(24, 1, 24, 8),
    ];
    assert.deepEqual(objectsOf(names, 32), [
      ...repeat(16, (i) => `${chunk(0, 2, 0, 16)}@${i}`),
      ...repeat(8, (i) => `${chunk(0, 2, 16, 8)}@${i}`),
      ...repeat(8, (i) => `${chunk(24, 1, 24, 8)}@${i}`),
    ]);
  });

  test('the choice does not depend on the order of the listing', () => {
    const names = [chunk(0, 1, 0, 8), page(3, 2), chunk(3, 1, 3, 5), chunk(5, 1, 5, 3), page(3)];
    const expected = objectsOf(names, 8);
    assert.deepEqual(expected, [
      ...repeat(3, (i) => `${chunk(0, 1, 0, 8)}@${i}`),
      `${page(3, 2)}@0`,
      `${chunk(3, 1, 3, 5)}@1`,
      ...repeat(3, (i) => `${chunk(5, 1, 5, 3)}@${i}`),
    ]);
    assert.deepEqual(objectsOf([...names].reverse(), 8), expected);
  });

  test('offsets no chunk holds are missing; other names are ignored', () => {
    assert.deepEqual(objectsOf([page(0), page(1), '.prepared'], 2), [`${page(0)}@0`, `${page(1)}@0`]);
    assert.deepEqual(resolveStagedPages([chunk(0, 1, 0, 3), page(4), 'unrelated.txt'], offsetsUpTo(6)), {
      found: false,
      missing: [30, 50],
    });
  });
});

describe('staged chunk text', () => {
  const row = (n: number): VisitorRow => ({ path: `/p${n}`, human: n, ai: 0, total: n });

  test('a header line of offsets and row counts, then the rows; read back page for page', () => {
    const pages = [
      { offset: 0, rows: [row(1), row(2)] },
      { offset: 10, rows: [] },
      { offset: 20, rows: [row(3), { ...row(4), path: '/a\nb,"c"\r,\u2028' }] },
    ];
    const text = chunkText(pages);
    assert.equal(text.split('\n')[0], '{"pages":[[0,2],[10,0],[20,2]]}');
    assert.equal(text.split('\n').length, 1 + 4 + 1);
    assert.deepEqual(parseChunk('c', text), pages);
    assert.deepEqual(parseChunk('c', chunkText([{ offset: 0, rows: [] }])), [{ offset: 0, rows: [] }]);
  });

  test('a chunk whose header and rows disagree is refused, never read as other pages', () => {
    const text = chunkText([{ offset: 0, rows: [row(1), row(2)] }]);
    assert.throws(() => parseChunk('c', text.replace('[[0,2]]', '[[0,3]]')), InvariantError);
    assert.throws(() => parseChunk('c', `{"rows":1}\n${JSON.stringify(row(1))}\n`), InvariantError);
  });
});
