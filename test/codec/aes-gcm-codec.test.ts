import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  AesGcmPayloadCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptError,
} from '../../src/codec/aes-gcm-codec';
import { loadCodecKeys, type CodecKeyRing } from '../../src/codec/keys';

function ring(...ids: string[]): { ring: CodecKeyRing; entries: string[] } {
  const entries = ids.map((id) => `${id}:${crypto.randomBytes(32).toString('base64')}`);
  const keys = loadCodecKeys({ PAYLOAD_CODEC_KEYS: entries.join(',') });
  assert.ok(keys);
  return { ring: keys, entries };
}

const text = (bytes: Uint8Array | null | undefined) =>
  Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const prompt = { projectId: 'docs', prompt: 'Rewrite the billing page: confidential roadmap inside' };

describe('AES-256-GCM payload codec', () => {
  test('round trip: ciphertext out, the same payload (metadata included) back', async () => {
    const codec = new AesGcmPayloadCodec(ring('k1').ring);
    const payload = defaultPayloadConverter.toPayload(prompt);
    const [encrypted] = await codec.encode([payload]);
    assert.ok(encrypted);
    assert.equal(text(encrypted.metadata?.encoding), ENCRYPTED_ENCODING);
    assert.equal(text(encrypted.metadata?.[KEY_ID_METADATA]), 'k1');
    assert.ok(!text(encrypted.data).includes('confidential'), 'plaintext in the ciphertext');
    assert.ok(!text(encrypted.data).includes('json/plain'), 'inner metadata in clear');
    const [decrypted] = await codec.decode([encrypted]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decrypted as Payload), prompt);
    assert.equal(text(decrypted?.metadata?.encoding), 'json/plain');
  });

  test('a fresh IV per payload: the same value never encrypts the same way twice', async () => {
    const codec = new AesGcmPayloadCodec(ring('k1').ring);
    const payload = defaultPayloadConverter.toPayload(prompt);
    const [a, b] = await codec.encode([payload, payload]);
    assert.notDeepEqual(Buffer.from(a?.data ?? []), Buffer.from(b?.data ?? []));
  });

  test('rotation: a ring with a new key first still decrypts what the old key wrote', async () => {
    const old = ring('2026-10');
    const [written] = await new AesGcmPayloadCodec(old.ring).encode([
      defaultPayloadConverter.toPayload(prompt),
    ]);
    const newEntry = `2026-11:${crypto.randomBytes(32).toString('base64')}`;
    const rotated = loadCodecKeys({ PAYLOAD_CODEC_KEYS: [newEntry, ...old.entries].join(',') });
    assert.ok(rotated && written);
    const codec = new AesGcmPayloadCodec(rotated);
    const [read] = await codec.decode([written]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(read as Payload), prompt);
    const [rewritten] = await codec.encode([defaultPayloadConverter.toPayload(prompt)]);
    assert.equal(text(rewritten?.metadata?.[KEY_ID_METADATA]), '2026-11', 'new payloads use the new key');
  });

  test('an unknown key id fails naming the id', async () => {
    const [written] = await new AesGcmPayloadCodec(ring('gone').ring).encode([
      defaultPayloadConverter.toPayload(prompt),
    ]);
    await assert.rejects(
      new AesGcmPayloadCodec(ring('k1').ring).decode([written as Payload]),
      (error: unknown) => error instanceof PayloadDecryptError && /key id "gone"/.test(error.message),
    );
  });

  test('tampered data, a swapped key id and truncation are refused', async () => {
    const keys = ring('a', 'b');
    const codec = new AesGcmPayloadCodec(keys.ring);
    const [written] = await codec.encode([defaultPayloadConverter.toPayload(prompt)]);
    assert.ok(written?.data && written.metadata);
    const flipped = Buffer.from(written.data);
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    await assert.rejects(codec.decode([{ ...written, data: flipped }]), /failed authentication/);
    const relabelled = { ...written, metadata: { ...written.metadata, [KEY_ID_METADATA]: Buffer.from('b') } };
    await assert.rejects(codec.decode([relabelled]), /key id "b"\) failed authentication/);
    await assert.rejects(codec.decode([{ ...written, data: flipped.subarray(0, 10) }]), /is truncated/);
  });

  test('payloads that are not encrypted pass through decode (histories from before encryption)', async () => {
    const codec = new AesGcmPayloadCodec(ring('k1').ring);
    const plain = defaultPayloadConverter.toPayload(prompt);
    assert.deepEqual(await codec.decode([plain]), [plain]);
  });
});
