import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenPaths } from '../../src/exports/seen-paths';

test('SeenPaths names the page of every path added, and no page for almost every path not added', () => {
  const seen = new SeenPaths();
  const count = 200_000;
  for (let i = 0; i < count; i += 1) seen.add(`/docs/section-${i % 97}/page-${i}`, Math.floor(i / 250));
  assert.equal(seen.size, count);
  for (let i = 0; i < count; i += 1) {
    assert.ok(
      seen.candidates(`/docs/section-${i % 97}/page-${i}`).includes(Math.floor(i / 250)),
      `path ${i}`,
    );
  }
  let falseCandidates = 0;
  for (let i = 0; i < count; i += 1) falseCandidates += seen.candidates(`/docs/other/page-${i}`).length;
  // A candidate only costs the merge a page read again; with 64-bit fingerprints it should not happen here.
  assert.equal(falseCandidates, 0);
  seen.add('/docs/section-0/page-0', 9);
  assert.deepEqual(seen.candidates('/docs/section-0/page-0').sort(), [0, 9], 'a path added twice names both');
});
