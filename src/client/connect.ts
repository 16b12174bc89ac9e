import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../contract/names';

/** A Temporal client configured like the worker: @temporalio/envconfig (TEMPORAL_ADDRESS, TLS, API key, profile). */
export async function connectClient(): Promise<Client> {
  const { connectionOptions, namespace } = loadClientConnectConfig();
  const connection = await Connection.connect(connectionOptions);
  return new Client({ connection, namespace: namespace ?? 'default' });
}

export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}
