import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { request } from 'undici';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createCodecServer } from '../../src/codec/codec-server';
import { loadCodecKeys } from '../../src/codec/keys';

const UI_ORIGIN = 'http://localhost:8233';
const TOKEN = 'operators-only-token-0123456789';
let server: http.Server;
let base: string;

before(async () => {
  const keys = loadCodecKeys({ PAYLOAD_CODEC_KEYS: `k1:${crypto.randomBytes(32).toString('base64')}` });
  assert.ok(keys);
  server = createCodecServer({ codec: new AesGcmPayloadCodec(keys), corsOrigins: [UI_ORIGIN], token: TOKEN });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

async function call(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await request(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${TOKEN}`,
      'x-namespace': 'default',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    json: (await response.body.json()) as { payloads?: JsonPayload[]; message?: string },
  };
}

const toJson = (value: unknown): JsonPayload => payloadToJson(defaultPayloadConverter.toPayload(value));

function payloadToJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

const decoded = (payload: JsonPayload | undefined): unknown =>
  JSON.parse(Buffer.from(payload?.data ?? '', 'base64').toString('utf8'));

describe('codec server (the protocol the Temporal UI and CLI speak)', () => {
  test('/encode then /decode returns the original payloads; the encoded form hides them', async () => {
    const value = { prompt: 'Describe the private beta' };
    const encoded = await call('/encode', { payloads: [toJson(value), toJson('second')] });
    assert.equal(encoded.status, 200);
    assert.equal(encoded.json.payloads?.length, 2);
    const first = encoded.json.payloads?.[0];
    assert.equal(Buffer.from(first?.metadata.encoding ?? '', 'base64').toString(), 'binary/encrypted');
    assert.ok(
      !Buffer.from(first?.data ?? '', 'base64')
        .toString('utf8')
        .includes('private beta'),
    );

    const back = await call('/decode', { payloads: encoded.json.payloads });
    assert.equal(back.status, 200);
    assert.deepEqual(decoded(back.json.payloads?.[0]), value);
    assert.deepEqual(decoded(back.json.payloads?.[1]), 'second');
  });

  test('a path prefix is accepted (e.g. /codec/decode behind a proxy)', async () => {
    const response = await call('/codec/decode', { payloads: [toJson(1)] });
    assert.equal(response.status, 200);
    assert.deepEqual(decoded(response.json.payloads?.[0]), 1);
  });

  test('CORS: the UI origin gets its preflight answered and may read responses', async () => {
    const preflight = await request(`${base}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    await preflight.body.dump();
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], UI_ORIGIN);
    assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
    assert.match(String(preflight.headers['access-control-allow-headers']), /X-Namespace/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
    const allowed = await call('/decode', { payloads: [] }, { origin: UI_ORIGIN });
    assert.equal(allowed.headers['access-control-allow-origin'], UI_ORIGIN);
  });

  test('CORS: another origin gets no allow header, so a browser there cannot read the answer', async () => {
    const response = await call('/decode', { payloads: [] }, { origin: 'https://evil.example' });
    assert.equal(response.headers['access-control-allow-origin'], undefined);
  });

  test('without the bearer token: 401 and nothing decoded', async () => {
    const encoded = await call('/encode', { payloads: [toJson('secret text')] });
    const anonymous = await call('/decode', { payloads: encoded.json.payloads }, { authorization: '' });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.json.payloads, undefined);
    const wrong = await call('/decode', { payloads: [] }, { authorization: 'Bearer not-the-token-at-all!!' });
    assert.equal(wrong.status, 401);
  });

  test('bad requests get 400/404/405 with a message naming the problem', async () => {
    assert.deepEqual((await call('/decode', '{not json')).json, {
      message: 'the body must be JSON: { "payloads": [...] }',
    });
    const badData = await call('/decode', { payloads: [{ data: '***' }] });
    assert.equal(badData.status, 400);
    assert.match(badData.json.message ?? '', /^payloads\.0\.data: data must be base64/);
    assert.equal((await call('/decode', { items: [] })).status, 400);
    assert.equal((await call('/transcode', { payloads: [] })).status, 404);
    const get = await request(`${base}/decode`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await get.body.dump();
    assert.equal(get.statusCode, 405);
  });

  test('a body over the limit gets 413 naming the limit, and the server goes on', async () => {
    const keys = loadCodecKeys({ PAYLOAD_CODEC_KEYS: `k1:${crypto.randomBytes(32).toString('base64')}` });
    assert.ok(keys);
    const small = createCodecServer({
      codec: new AesGcmPayloadCodec(keys),
      corsOrigins: [],
      maxBodyBytes: 1024,
    });
    small.listen(0, '127.0.0.1');
    await once(small, 'listening');
    const url = `http://127.0.0.1:${(small.address() as AddressInfo).port}/decode`;
    try {
      const big = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: [toJson('x'.repeat(4096))] }),
      });
      assert.equal(big.statusCode, 413);
      assert.deepEqual(await big.body.json(), { message: 'the body is larger than 1024 bytes' });
      const fits = await request(url, { method: 'POST', body: JSON.stringify({ payloads: [] }) });
      assert.equal(fits.statusCode, 200);
      await fits.body.dump();
    } finally {
      await new Promise<void>((resolve) => small.close(() => resolve()));
    }
  });

  test('a payload under an unknown key is a 400 naming the key id', async () => {
    const foreign = loadCodecKeys({
      PAYLOAD_CODEC_KEYS: `other:${crypto.randomBytes(32).toString('base64')}`,
    });
    assert.ok(foreign);
    const [payload] = await new AesGcmPayloadCodec(foreign).encode([defaultPayloadConverter.toPayload('x')]);
    assert.ok(payload);
    const response = await call('/decode', { payloads: [payloadToJson(payload)] });
    assert.equal(response.status, 400);
    assert.match(response.json.message ?? '', /key id "other"/);
  });
});

describe('npm run codec-server', () => {
  const main = require.resolve('../../src/codec/codec-server-main.ts');
  const start = (env: Record<string, string>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', main],
        { env: { PATH: process.env.PATH ?? '', ...env } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, output: stdout + stderr }),
      );
    });

  test('refuses to start without keys, or with a short token, saying which variable', async () => {
    const noKeys = await start({});
    assert.equal(noKeys.code, 1);
    assert.match(noKeys.output, /PAYLOAD_CODEC_KEYS: is required to run the codec server/);
    const key = crypto.randomBytes(32).toString('base64');
    const shortToken = await start({ PAYLOAD_CODEC_KEYS: `k:${key}`, CODEC_SERVER_TOKEN: 'short' });
    assert.equal(shortToken.code, 1);
    assert.match(shortToken.output, /CODEC_SERVER_TOKEN: must be at least 16 characters/);
    const badKey = await start({ PAYLOAD_CODEC_KEYS: `k:${key.slice(0, 30)}` });
    assert.match(badKey.output, /PAYLOAD_CODEC_KEYS \(entry 1\): key "k" must be 32 bytes/);
    assert.ok(!badKey.output.includes(key.slice(0, 30)), 'key material echoed');
  });
});
