import { z } from 'zod';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { createCodecServer } from './codec-server';
import { PAYLOAD_CODEC_KEYS_VAR, loadCodecKeys } from './keys';
import { portFromText } from '../contract/validation';
import { ConfigError } from '../contract/errors';

const envSchema = z.object({
  CODEC_SERVER_HOST: z.string().min(1, 'must not be empty').default('127.0.0.1'),
  CODEC_SERVER_PORT: portFromText.default(8888),
  CODEC_SERVER_CORS_ORIGINS: z
    .string()
    .default('http://localhost:8233')
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    ),
  // Empty counts as unset, as docker-compose passes `${CODEC_SERVER_TOKEN:-}`.
  CODEC_SERVER_TOKEN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().min(16, 'must be at least 16 characters when set').optional(),
  ),
});

/** `npm run codec-server`: the codec endpoint for the Temporal UI, configured by the environment. */
function main(): void {
  const env = envSchema.safeParse(process.env);
  if (!env.success) {
    const lines = env.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid codec server configuration:\n${lines.join('\n')}`);
  }
  const keys = loadCodecKeys();
  if (!keys) throw new ConfigError(`${PAYLOAD_CODEC_KEYS_VAR}: is required to run the codec server`);
  const { CODEC_SERVER_HOST: host, CODEC_SERVER_PORT: port, CODEC_SERVER_CORS_ORIGINS: origins } = env.data;
  const server = createCodecServer({
    codec: new AesGcmPayloadCodec(keys),
    corsOrigins: origins,
    ...(env.data.CODEC_SERVER_TOKEN === undefined ? {} : { token: env.data.CODEC_SERVER_TOKEN }),
  });
  server.listen(port, host, () => {
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    console.log(
      `codec server on http://${host}:${bound} (keys: ${[...keys.byId.keys()].join(', ')}; CORS: ${origins.join(', ')})`,
    );
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

try {
  main();
} catch (error: unknown) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
