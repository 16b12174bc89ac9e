import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenPaths } from '../../src/exports/merge';

test('SeenPaths names the page of every path added before, and no page for a new one, over 200,000 paths', () => {
  const seen = new SeenPaths();
  const count = 200_000;
  const page = (i: number): number => Math.floor(i / 250);
  for (let i = 0; i < count; i += 1) assert.deepEqual(seen.add(`/docs/s-${i % 97}/p-${i}`, page(i)), []);
  for (let i = 0; i < count; i += 1) assert.deepEqual(seen.add(`/docs/s-${i % 97}/p-${i}`, 9_999), [page(i)]);
  let matches = 0;
  for (let i = 0; i < count; i += 1) matches += seen.add(`/docs/other/p-${i}`, 0).length;
  assert.equal(matches, 0, 'no two paths share a 64-bit fingerprint here');
  assert.deepEqual(seen.add('', 1), [], 'the empty path too');
});

test('paths sharing a fingerprint each name the pages of the others (the caller compares the paths)', () => {
  const seen = new SeenPaths(() => [1, 2]);
  assert.deepEqual(seen.add('/a', 0), []);
  assert.deepEqual(seen.add('/b', 3), [0]);
  assert.deepEqual(seen.add('/c', 5).sort(), [0, 3]);
});
