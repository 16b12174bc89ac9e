import crypto from 'node:crypto';
import http from 'node:http';
import type { PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Origins allowed to call from a browser, e.g. the Temporal UI's `http://localhost:8233`; `*` for any. */
  corsOrigins: readonly string[];
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Largest request body accepted; default 16 MiB. */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Temporal's codec protocol: payloads in proto JSON form, metadata values and data in base64. */
const bodySchema = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), z.base64({ error: 'metadata values must be base64' })).optional(),
      data: z.base64({ error: 'data must be base64' }).optional(),
    }),
  ),
});
const ProtoPayload = temporal.api.common.v1.Payload;

/**
 * The codec endpoint the Temporal UI and `temporal` CLI call (`POST <path>/encode`, `POST <path>/decode`) so that
 * operators who hold it see decoded payloads. The keys never leave this process.
 */
export function createCodecServer(options: CodecServerOptions): http.Server {
  return http.createServer((req, res) => {
    handle(options, req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : 'codec failure';
      if (!res.headersSent) send(res, 400, { message });
      else res.destroy();
    });
  });
}

async function handle(options: CodecServerOptions, req: http.IncomingMessage, res: http.ServerResponse) {
  cors(options, req, res);
  if (req.method === 'OPTIONS') {
    res.writeHead(204).end();
    return;
  }
  const operation = req.url?.split('?')[0]?.split('/').pop();
  if (operation !== 'encode' && operation !== 'decode')
    return send(res, 404, { message: 'POST /encode or /decode' });
  if (req.method !== 'POST') return send(res, 405, { message: 'use POST' });
  if (options.token !== undefined && !authorized(req.headers.authorization, options.token)) {
    return send(res, 401, { message: 'a valid Authorization: Bearer token is required' });
  }
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const raw = await readBody(req, limit);
  if (raw === undefined) return send(res, 413, { message: `the body is larger than ${limit} bytes` });
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return send(res, 400, { message: 'the body must be JSON: { "payloads": [...] }' });
  }
  const body = bodySchema.safeParse(json);
  if (!body.success) {
    const issue = body.error.issues[0];
    return send(res, 400, { message: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
  }
  const payloads = body.data.payloads.map((payload) => ProtoPayload.fromObject(payload));
  const result =
    operation === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
  // The proto JSON form (bytes in base64), every payload with its metadata and data even when empty.
  const asJson = (payload: (typeof result)[number]) => ({
    metadata: {},
    data: '',
    ...ProtoPayload.toObject(ProtoPayload.create(payload), { bytes: String }),
  });
  send(res, 200, { payloads: result.map(asJson) });
}

function cors(options: CodecServerOptions, req: http.IncomingMessage, res: http.ServerResponse): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const allowed = options.corsOrigins.includes('*') || options.corsOrigins.includes(origin);
  if (!allowed) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Allow-Credentials', 'true');
  res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
  res.setHeader('Access-Control-Max-Age', '600');
}

function authorized(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.replace(/^Bearer\s+/i, '') ?? '', 'utf8');
  const expected = Buffer.from(token, 'utf8');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** The body as text, or undefined when it is larger than `limit` (read to its end, so the answer reaches the caller). */
async function readBody(req: http.IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
