import { errors as undiciErrors } from 'undici';
import { MalformedResponseError, NetworkError, TimeoutError, type DocsApiOperation } from './errors';

/** Connection failures that happen before a request can reach the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export interface TransportFailure {
  operation: DocsApiOperation;
  error: unknown;
  signal: AbortSignal | undefined;
  /** The response had begun (its body failed): the service received the request. */
  responseStarted: boolean;
  status?: number;
  requestId?: string | undefined;
  /** Removes the API key from a message. */
  redact: (text: string) => string;
}

/**
 * The DocsApiError for a call that got no whole answer: a timeout, a failed connection, a body too large. The
 * caller's own abort is passed through as its reason. `safeToRetry` only when the request cannot have left.
 */
export function errorFromTransport(failure: TransportFailure): unknown {
  const { operation, error, signal, responseStarted, status, requestId } = failure;
  if (signal?.aborted) return signal.reason ?? error;
  const code = errorCode(error);
  const base = {
    operation,
    ...(status === undefined ? {} : { status }),
    ...(requestId === undefined ? {} : { requestId }),
    cause: error,
  };
  const message = failure.redact(error instanceof Error ? error.message : String(error));
  if (error instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TimeoutError(`connect timeout: ${message}`, { ...base, safeToRetry: true });
  }
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return new TimeoutError(`no answer in time: ${message}`, { ...base, safeToRetry: false });
  }
  if (code === 'BODY_TOO_LARGE') {
    return new MalformedResponseError(message, { ...base, safeToRetry: false }, 'body');
  }
  const notSent = !responseStarted && code !== undefined && NOT_SENT_CODES.has(code);
  return new NetworkError(
    `connection failed (${code ?? 'unknown'}): ${message}`,
    { ...base, safeToRetry: notSent },
    code,
  );
}

/** The most telling error code along the cause chain (undici wraps socket errors). */
export function errorCode(error: unknown): string | undefined {
  const codes: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = 'code' in current ? current.code : undefined;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return (
    codes.find((code) => NOT_SENT_CODES.has(code)) ??
    codes.find((code) => code !== 'UND_ERR_SOCKET') ??
    codes[0]
  );
}
