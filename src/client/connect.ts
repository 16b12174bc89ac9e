import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../contract/names';
import { dataConverterFromEnv } from '../codec/data-converter';

/**
 * A Temporal client configured like the worker: @temporalio/envconfig (TEMPORAL_ADDRESS, TLS, API key, profile)
 * and payload encryption when PAYLOAD_CODEC_KEYS is set.
 */
export async function connectClient(): Promise<Client> {
  const dataConverter = dataConverterFromEnv();
  const { connectionOptions, namespace } = loadClientConnectConfig();
  const connection = await Connection.connect(connectionOptions);
  return new Client({
    connection,
    namespace: namespace ?? 'default',
    ...(dataConverter ? { dataConverter } : {}),
  });
}

export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}
