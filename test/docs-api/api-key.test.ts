import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import { ApiKey } from '../../src/docs-api/api-key';

describe('ApiKey', () => {
  test('accepts any <letters/digits>_<non-empty> key, not only one vendor prefix', () => {
    for (const key of ['mint_abc', 'sk_live_x', 'A1_9', 'test_a-b.c'])
      assert.equal(new ApiKey(key).prefix, key.split('_')[0]);
  });

  test('rejects keys without the form, naming the variable', () => {
    for (const key of ['', 'mint_', '_secret', 'no-underscore', 'mi nt_x', 'mint_a b']) {
      assert.throws(() => new ApiKey(key), /DOCS_API_KEY: must have the form <prefix>_<secret>/);
    }
  });

  test('every printable form is redacted', () => {
    const key = new ApiKey('mint_topsecret');
    assert.equal(String(key), 'mint_****');
    assert.equal(JSON.stringify({ key }), '{"key":"mint_****"}');
    assert.equal(inspect(key), 'ApiKey(mint_****)');
    assert.equal(`${String(key)}`, 'mint_****');
  });

  test('redact() removes the key and its secret from any text', () => {
    const key = new ApiKey('mint_topsecret');
    assert.equal(
      key.redact('auth Bearer mint_topsecret failed; secret=topsecret'),
      'auth Bearer mint_**** failed; secret=****',
    );
  });
});
