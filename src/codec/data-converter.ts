import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { loadCodecKeys } from './keys';

/**
 * The data converter shared by the worker, the starter CLI and the client module: AES-256-GCM payload encryption
 * when PAYLOAD_CODEC_KEYS is set, Temporal's default (plain JSON) when it is not.
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const keys = loadCodecKeys(env);
  return keys ? { payloadCodecs: [new AesGcmPayloadCodec(keys)] } : undefined;
}
