import {
  Client,
  Connection,
  isGrpcServiceError,
  type ConnectionOptions,
  type WorkflowClientInterceptor,
} from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError } from '../contract/errors';
import { DEFAULT_TASK_QUEUE } from '../contract/names';
import { dataConverterFromEnv } from '../codec/aes-gcm-codec';

/** gRPC status codes (grpc.io/docs/guides/status-codes) that mean the server was not reached in time. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

const DEFAULT_ADDRESS = 'localhost:7233';

/** What a command line may set instead of the environment (`--address`, `--namespace`, `--profile`). */
export interface ConnectionOverrides {
  address?: string;
  namespace?: string;
  /** A profile of the Temporal config file (TEMPORAL_CONFIG_FILE, else the platform's `temporal.toml`). */
  profile?: string;
}

/** The connection as @temporalio/envconfig reads it, with where its address came from (for error messages). */
export interface TemporalConnectConfig {
  /** Options both the client's Connection and the worker's NativeConnection take (an API key as text). */
  connectionOptions: Omit<ConnectionOptions, 'apiKey'> & { apiKey?: string };
  address: string;
  namespace: string;
  /** `--address`, `TEMPORAL_ADDRESS`, `profile "<name>"` or `the default (TEMPORAL_ADDRESS unset)`. */
  addressSource: string;
}

/** The booleans envconfig reads as "1"/"true" and silently as false otherwise: anything else is refused here. */
const BOOLEAN_VARS = ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION'];
const BOOLEAN_VALUES = ['true', 'false', '1', '0'];

/**
 * Reads the Temporal connection like the worker and the `temporal` CLI (@temporalio/envconfig: TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE and its config file), the overrides
 * winning. Throws ConfigError naming the variable when a value breaks its rule; contacts nothing.
 */
export function temporalConnectConfig(
  overrides: ConnectionOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): TemporalConnectConfig {
  for (const name of BOOLEAN_VARS) {
    const value = env[name];
    if (value !== undefined && value !== '' && !BOOLEAN_VALUES.includes(value)) {
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
  const address = loaded.connectionOptions.address ?? DEFAULT_ADDRESS;
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

/**
 * Temporal did not answer: nothing was started, read or changed. The message names the address, where it came
 * from and what to check; `cause` keeps the transport's own error for debugging.
 */
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
 * A Temporal client configured like the worker: `temporalConnectConfig` (environment, profile, overrides) and
 * payload encryption when PAYLOAD_CODEC_KEYS(_FILE) is set. Throws ConfigError for a bad setting before any
 * connection, TemporalUnreachableError when the server does not answer within `connectTimeoutMs` (default 10 s);
 * a server that refuses the connection (authentication) throws as is.
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

/** UNAVAILABLE or DEADLINE_EXCEEDED: the server was not reached, or did not answer in time. */
export function isUnreachableStatus(code: number | undefined): boolean {
  return code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED;
}

/** TEMPORAL_TASK_QUEUE, else `docs-agent`: where the worker polls and where starts go. */
export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}
