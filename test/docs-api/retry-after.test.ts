import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetryAfter } from '../../src/docs-api/retry-after';

test('Retry-After in seconds', () => {
  assert.equal(parseRetryAfter('120'), 120_000);
  assert.equal(parseRetryAfter(' 0 '), 0);
  assert.equal(parseRetryAfter('1.5'), 1500);
});

test('Retry-After as an HTTP date, relative to now', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:59:00 GMT', now), 0, 'a date in the past means now');
});

test('absent or unparseable Retry-After', () => {
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
  assert.equal(parseRetryAfter('-5'), undefined);
});
