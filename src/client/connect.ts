import { Client, Connection, isGrpcServiceError, type WorkflowClientInterceptor } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError } from '../contract/errors';
import { DEFAULT_TASK_QUEUE } from '../contract/names';
import { dataConverterFromEnv } from '../codec/aes-gcm-codec';

/** What a command line may set instead of the environment (`--address`, `--namespace`, `--profile`). */
type ConnectionOverrides = { address?: string; namespace?: string; profile?: string };

/**
 * Reads the Temporal connection as the worker and the `temporal` CLI do (@temporalio/envconfig: TEMPORAL_* and the
 * config file's profile, TEMPORAL_CONFIG_FILE else the platform's `temporal.toml`), the overrides winning: options
 * both the client's Connection and the worker's NativeConnection take, and where the address came from (for error
 * messages). Throws ConfigError naming the variable that breaks its rule.
 */
export function temporalConnectConfig(
  overrides: ConnectionOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
) {
  // envconfig reads anything but "1"/"true" silently as false.
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    const value = env[name];
    if (value !== undefined && value !== '' && !['true', 'false', '1', '0'].includes(value)) {
      throw new ConfigError(`${name}: must be true or false (got "${value.slice(0, 40)}")`);
    }
  }
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) vars[name] = value;
  if (overrides.address !== undefined) vars.TEMPORAL_ADDRESS = overrides.address;
  if (overrides.namespace !== undefined) vars.TEMPORAL_NAMESPACE = overrides.namespace;
  const profile = overrides.profile ?? (env.TEMPORAL_PROFILE || undefined);
  let loaded;
  try {
    loaded = loadClientConnectConfig({ overrideEnvVars: vars, ...(profile ? { profile } : {}) });
  } catch (error) {
    const where = profile ? `profile "${profile}"` : 'the Temporal config file';
    throw new ConfigError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const address = loaded.connectionOptions.address ?? 'localhost:7233';
  const addressSource =
    overrides.address !== undefined
      ? '--address'
      : env.TEMPORAL_ADDRESS
        ? 'TEMPORAL_ADDRESS'
        : loaded.connectionOptions.address !== undefined
          ? `profile "${profile ?? 'default'}"`
          : 'the default (TEMPORAL_ADDRESS unset)';
  return {
    connectionOptions: { ...loaded.connectionOptions, address },
    address,
    namespace: loaded.namespace ?? 'default',
    addressSource,
  };
}

/** Temporal did not answer: nothing was started, read or changed. The message says where it looked and what to check. */
export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
  constructor(
    readonly address: string,
    readonly addressSource: string,
    options: { cause: unknown },
  ) {
    const setting = addressSource.startsWith('the default')
      ? " (or set TEMPORAL_ADDRESS to the server's host:port)"
      : `, that ${addressSource} names it`;
    super(
      `Temporal at ${address} (${addressSource}) is unreachable. Check that the server runs and listens there` +
        `${setting}, and that TEMPORAL_TLS and TEMPORAL_API_KEY match the server (Temporal Cloud needs TLS)`,
      options,
    );
  }
}

/**
 * A Temporal client configured like the worker (`temporalConnectConfig`, payload encryption when
 * PAYLOAD_CODEC_KEYS(_FILE) is set). Throws ConfigError before connecting, TemporalUnreachableError when the
 * server does not answer within `connectTimeoutMs` (default 10 s).
 */
export async function connectClient(
  options: {
    connectTimeoutMs?: number;
    interceptors?: WorkflowClientInterceptor[];
    overrides?: ConnectionOverrides;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Client> {
  const env = options.env ?? process.env;
  const dataConverter = dataConverterFromEnv(env);
  const config = temporalConnectConfig(options.overrides, env);
  // lazy() checks the options; ensureConnected() only waits for the server, so its failures are about reaching it.
  const connection = Connection.lazy({
    ...config.connectionOptions,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
  });
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close().catch(() => undefined);
    const code = grpcStatusOf(error);
    if (code !== undefined && !isUnreachableStatus(code)) throw error;
    throw new TemporalUnreachableError(config.address, config.addressSource, { cause: error });
  }
  return new Client({
    connection,
    namespace: config.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(options.interceptors ? { interceptors: { workflow: options.interceptors } } : {}),
  });
}

/** The gRPC status code of a call's failure (a ServiceError's cause, or the gRPC error itself). */
export function grpcStatusOf(error: unknown): number | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (isGrpcServiceError(current)) return current.code;
    current = current.cause;
  }
  return undefined;
}

/** UNAVAILABLE (14) or DEADLINE_EXCEEDED (4): the server was not reached, or did not answer in time. */
export function isUnreachableStatus(code: number | undefined): boolean {
  return code === 14 || code === 4;
}

/** TEMPORAL_TASK_QUEUE, else `docs-agent`: where the worker polls and where starts go. */
export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}
