import { Client, Connection, isGrpcServiceError, type WorkflowClientInterceptor } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../contract/names';
import { dataConverterFromEnv } from '../codec/data-converter';

/** gRPC status codes (grpc.io/docs/guides/status-codes) that mean the server was not reached in time. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** Temporal did not answer: nothing was started, read or changed. `cause` is the transport's error. */
export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
  constructor(
    readonly address: string,
    options: { cause: unknown },
  ) {
    super(`Temporal at ${address} is unreachable: ${messageOf(options.cause)}`, options);
  }
}

/**
 * A Temporal client configured like the worker: @temporalio/envconfig (TEMPORAL_ADDRESS, TLS, API key, profile)
 * and payload encryption when PAYLOAD_CODEC_KEYS is set. Throws TemporalUnreachableError when the server does
 * not answer within `connectTimeoutMs` (default 10 s); a bad configuration, or a server that refuses the connection (authentication), throws as is.
 */
export async function connectClient(
  options: { connectTimeoutMs?: number; interceptors?: WorkflowClientInterceptor[] } = {},
): Promise<Client> {
  const dataConverter = dataConverterFromEnv();
  const { connectionOptions, namespace } = loadClientConnectConfig();
  // lazy() checks the options; ensureConnected() only waits for the server, so its failures are about reaching it.
  const connection = Connection.lazy({
    ...connectionOptions,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
  });
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close().catch(() => undefined);
    const code = grpcStatusOf(error);
    if (code !== undefined && !isUnreachableStatus(code)) throw error;
    throw new TemporalUnreachableError(connectionOptions.address ?? 'localhost:7233', { cause: error });
  }
  return new Client({
    connection,
    namespace: namespace ?? 'default',
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}
