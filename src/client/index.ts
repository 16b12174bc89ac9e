/** The package's client module: typed functions for other services, plus the contract's definitions. */
export * from '../contract';
export * from './connect';
export * from './agent-job';
export * from './visitors-export';
export * from './schedule';
export * from './setup';
export { AesGcmPayloadCodec, dataConverterFromEnv, PayloadDecryptError } from '../codec/aes-gcm-codec';
export { loadCodecKeys, CodecKeyError, PAYLOAD_CODEC_KEYS_VAR } from '../codec/keys';
