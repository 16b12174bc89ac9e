import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';

/** An answer before encoding: `body` is sent as JSON. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An answer as bytes on the wire (faults produce these directly). */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  payload?: string;
}

export const MAX_BODY_BYTES = 1024 * 1024;

const ERROR_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'invalid_request',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

export function errorCode(status: number): string {
  return ERROR_CODES[status] ?? (status >= 500 ? 'server_error' : 'client_error');
}

export function errorReply(status: number, message: string, extra: Record<string, string> = {}): Reply {
  return { status, body: { error: { code: errorCode(status), message, ...extra } } };
}

/**
 * An error reply in the real service's shape: `{ "error": "<message>" }`; a 400 of the analytics operation says
 * what was wrong in `details: [{ "message" }]`. Other replies are returned as they are.
 */
export function inServiceShape(reply: Reply, analytics: boolean): Reply {
  const parsed = detailedErrorSchema.safeParse(reply.body);
  if (!parsed.success) return reply;
  const { message } = parsed.data.error;
  if (analytics && reply.status === 400) {
    return { ...reply, body: { error: 'invalid query parameters', details: [{ message }] } };
  }
  return { ...reply, body: { error: message } };
}

const detailedErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export function invalid(field: string, message: string): Reply {
  return errorReply(400, message, { field });
}

export function notFound(message: string): Reply {
  return errorReply(404, message);
}

export function methodNotAllowed(method: string, allowed: readonly string[]): Reply {
  return { ...errorReply(405, `${method} is not allowed here`), headers: { allow: allowed.join(', ') } };
}

/** A 429; without `retryAfter` it carries no Retry-After header (as some budgets answer). */
export function tooManyRequests(retryAfter: string | undefined): Reply {
  const reply = errorReply(429, 'rate limit exceeded');
  return retryAfter === undefined ? reply : { ...reply, headers: { 'retry-after': retryAfter } };
}

export function encode(reply: Reply): RawReply {
  const headers = { ...reply.headers };
  if (reply.body === undefined) return { status: reply.status, headers };
  return {
    status: reply.status,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(reply.body),
  };
}

export function write(res: ServerResponse, raw: RawReply, requestId: string, nowMs: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(raw.status, {
    ...raw.headers,
    'x-request-id': requestId,
    date: new Date(nowMs).toUTCString(),
  });
  res.end(raw.payload);
}

/** The request body, or 'too-large' past the limit (the rest is still read and dropped, so the answer can be sent). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= maxBytes) chunks.push(buffer);
  }
  return size > maxBytes ? 'too-large' : Buffer.concat(chunks);
}

export type ParsedBody = { kind: 'empty' } | { kind: 'json'; value: unknown } | { kind: 'not-json' };

export function parseBody(raw: Buffer): ParsedBody {
  if (raw.length === 0) return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { kind: 'not-json' };
  }
}
