import crypto from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { loadCodecKeys, type CodecKeyRing } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = temporal.api.common.v1.Payload;

/** A payload that cannot be decrypted; the message names the key id, never key material or plaintext. */
export class PayloadDecryptError extends Error {
  override readonly name = 'PayloadDecryptError';
}

/**
 * AES-256-GCM over the whole serialized payload (metadata included), under the ring's active key; the key id
 * travels in clear metadata and is bound to the ciphertext as additional data. Payloads that are not encrypted
 * pass through decode, so histories written before encryption was turned on still read.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(private readonly keys: CodecKeyRing) {}

  // Work inside the executor so that a failure rejects the promise rather than throwing at the call.
  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.encrypt(payload))));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.decrypt(payload))));
  }

  private encrypt(payload: Payload): Payload {
    const { id, key } = this.keys.active;
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(id, 'utf8'));
    const plain = ProtoPayload.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(id) },
      data: new Uint8Array(data),
    };
  }

  private decrypt(payload: Payload): Payload {
    if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
    const id = text(payload.metadata?.[KEY_ID_METADATA]);
    const ring = this.keys.byId.get(id);
    if (!ring) {
      throw new PayloadDecryptError(
        `payload encrypted with key id "${id}", which is not among the configured keys (PAYLOAD_CODEC_KEYS)`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadDecryptError(`encrypted payload (key id "${id}") is truncated`);
    }
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', ring.key, data.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(id, 'utf8'));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return ProtoPayload.decode(plain);
    } catch {
      throw new PayloadDecryptError(
        `encrypted payload (key id "${id}") failed authentication: a wrong key or altered data`,
      );
    }
  }
}

function utf8(value: string): Uint8Array {
  return new Uint8Array(Buffer.from(value, 'utf8'));
}

function text(bytes: Uint8Array | null | undefined): string {
  return bytes ? Buffer.from(bytes).toString('utf8') : '';
}

/**
 * The data converter shared by the worker, the starter CLI and the client module: AES-256-GCM payload encryption
 * when PAYLOAD_CODEC_KEYS is set, Temporal's default (plain JSON) when it is not.
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const keys = loadCodecKeys(env);
  return keys ? { payloadCodecs: [new AesGcmPayloadCodec(keys)] } : undefined;
}
