import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDuration } from '../../src/contract/duration';

describe('parseDuration', () => {
  test('milliseconds as numbers', () => {
    assert.equal(parseDuration(1500), 1500);
    assert.equal(parseDuration(0), 0);
    assert.equal(parseDuration(-1), undefined);
    assert.equal(parseDuration(Number.NaN), undefined);
    assert.equal(parseDuration(Number.POSITIVE_INFINITY), undefined);
  });

  test("the SDK's duration strings", () => {
    assert.equal(parseDuration('5s'), 5000);
    assert.equal(parseDuration('2 minutes'), 120_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration(' 5s '), 5000);
  });

  test('the compound Go form the Temporal CLI prints', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('2m3s'), 123_000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('1m500ms'), 60_500);
  });

  test('anything else is not a duration', () => {
    for (const text of ['soon', '', '-5s', '5 parsecs', '1h30', 'h1'])
      assert.equal(parseDuration(text), undefined, text);
  });
});
