import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CodecKeyError, loadCodecKeys } from '../../src/codec/keys';

const material = () => crypto.randomBytes(32).toString('base64');

describe('PAYLOAD_CODEC_KEYS', () => {
  test('unset or blank turns encryption off', () => {
    assert.equal(loadCodecKeys({}), undefined);
    assert.equal(loadCodecKeys({ PAYLOAD_CODEC_KEYS: '  ' }), undefined);
  });

  test('the first key encrypts, every key decrypts', () => {
    const ring = loadCodecKeys({ PAYLOAD_CODEC_KEYS: `2026-11:${material()}, 2026-10:${material()}` });
    assert.equal(ring?.active.id, '2026-11');
    assert.deepEqual([...(ring?.byId.keys() ?? [])], ['2026-11', '2026-10']);
    assert.equal(ring?.active.key.length, 32);
  });

  const bad: [string, (secret: string) => string, RegExp][] = [
    ['no id', (secret) => secret, /entry 1\): must be <id>:<base64 key>/],
    ['an id with a space', (secret) => `my key:${secret}`, /entry 1\): must be <id>:<base64 key>/],
    ['16-byte key', () => `k1:${crypto.randomBytes(16).toString('base64')}`, /"k1" must be 32 bytes/],
    ['not base64', (secret) => `k1:${secret.slice(0, 20)}!!${secret.slice(22)}`, /"k1" must be 32 bytes/],
    ['duplicate id', (secret) => `k1:${secret},k1:${material()}`, /key id "k1" appears twice/],
    ['second entry broken', (secret) => `k1:${secret},k2:short`, /entry 2\): key "k2" must be 32 bytes/],
  ];
  for (const [name, value, message] of bad) {
    test(`rejects ${name}, naming the variable and never echoing the key`, () => {
      const secret = material();
      const raw = value(secret);
      assert.throws(
        () => loadCodecKeys({ PAYLOAD_CODEC_KEYS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof CodecKeyError);
          assert.match(error.message, /^PAYLOAD_CODEC_KEYS/);
          assert.match(error.message, message);
          assert.ok(!error.message.includes(secret.slice(0, 12)), 'key material in the message');
          return true;
        },
      );
    });
  }
});

describe('PAYLOAD_CODEC_KEYS_FILE', () => {
  test('the ring is read from the file; the file and the variable together are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-agent-keys-'));
    try {
      const file = path.join(dir, 'keys');
      fs.writeFileSync(file, `k1:${material()},k0:${material()}\n`);
      assert.deepEqual(
        [...(loadCodecKeys({ PAYLOAD_CODEC_KEYS_FILE: file })?.byId.keys() ?? [])],
        ['k1', 'k0'],
      );
      assert.throws(
        () => loadCodecKeys({ PAYLOAD_CODEC_KEYS_FILE: file, PAYLOAD_CODEC_KEYS: `k2:${material()}` }),
        (error: unknown) =>
          error instanceof CodecKeyError && /are both set: set one of them, not both/.test(error.message),
      );
      fs.writeFileSync(file, 'k1:short\n');
      assert.throws(
        () => loadCodecKeys({ PAYLOAD_CODEC_KEYS_FILE: file }),
        /PAYLOAD_CODEC_KEYS_FILE \(entry 1\): key "k1" must be 32 bytes/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
