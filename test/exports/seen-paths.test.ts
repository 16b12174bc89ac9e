import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenPaths } from '../../src/exports/seen-paths';

test('SeenPaths tells a path added before from a new one, over 200,000 paths', () => {
  const seen = new SeenPaths();
  const count = 200_000;
  for (let i = 0; i < count; i += 1) assert.ok(seen.add(`/docs/section-${i % 97}/page-${i}`), `path ${i}`);
  assert.equal(seen.size, count);
  for (let i = 0; i < count; i += 1) assert.equal(seen.add(`/docs/section-${i % 97}/page-${i}`), false);
  let collisions = 0;
  for (let i = 0; i < count; i += 1) if (!seen.add(`/docs/other/page-${i}`)) collisions += 1;
  assert.equal(collisions, 0, 'no two paths share a 64-bit fingerprint here');
  assert.equal(seen.size, 2 * count);
  assert.ok(seen.add(''), 'the empty path too');
});
