import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { once } from 'node:events';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { awaitAgentJob, startAgentJob } from '../../src/client/agent-job';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createCodecServer } from '../../src/codec/codec-server';
import { loadCodecKeys } from '../../src/codec/keys';
import { freePort } from '../../dev/ports';
import { startUiStack, uiTestsSkipped, type UiStack } from '../helpers/browser';

// Skipped without Chromium, except in CI (see uiTestsSkipped).
const skip = uiTestsSkipped();
let codecServer: http.Server | undefined;
let ui: UiStack | undefined;
let uiPort: number;
let codec: PayloadCodec;
const decodeOrigins: string[] = [];

before(async () => {
  if (skip) return;
  const keys = loadCodecKeys({ PAYLOAD_CODEC_KEYS: `ui:${crypto.randomBytes(32).toString('base64')}` });
  assert.ok(keys);
  codec = new AesGcmPayloadCodec(keys);
  const [codecPort, port] = await Promise.all([freePort(), freePort()]);
  uiPort = port;
  codecServer = createCodecServer({
    codec,
    corsOrigins: [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`],
  });
  codecServer.on('request', (req: http.IncomingMessage) => {
    if (req.method === 'POST' && req.url?.split('?')[0]?.endsWith('/decode'))
      decodeOrigins.push(req.headers.origin ?? '');
  });
  codecServer.listen(codecPort, '127.0.0.1');
  await once(codecServer, 'listening');
  ui = await startUiStack({
    name: 'ui-codec',
    temporal: { ui: true, uiPort, uiCodecEndpoint: `http://127.0.0.1:${codecPort}` },
    simulator: { jobs: { durationMs: 500 } },
    worker: () => ({ dataConverter: { payloadCodecs: [codec] } }),
  });
});
after(async () => {
  try {
    await ui?.stop();
  } finally {
    if (codecServer?.listening) codecServer.close();
  }
});

test(
  'an operator sees an encrypted job decoded in the Temporal UI through the codec server',
  { skip },
  async () => {
    assert.ok(ui, 'started by the before hook');
    const { browser, stack } = ui;
    const client = new Client({
      connection: stack.env.connection,
      dataConverter: { payloadCodecs: [codec] },
    });
    const prompt = `Explain the confidential migration ${crypto.randomUUID()}`;
    const handle = await startAgentJob(
      client,
      { projectId: 'ui-codec', prompt, polling: { initialInterval: '200ms' } },
      { key: 'encrypted' },
    );
    const result = await awaitAgentJob(client, handle.workflowId);
    assert.ok(result.prLink);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(
      `http://127.0.0.1:${uiPort}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}`,
    );
    await page.getByText(result.prLink).first().waitFor({ timeout: 20_000 });
    const text = await page.locator('body').innerText();
    assert.ok(text.includes(prompt.split(' ').pop() ?? prompt), 'the decoded prompt is shown');
    assert.ok(decodeOrigins.length > 0, 'the UI asked the codec server to decode');
    assert.ok(decodeOrigins.every((origin) => origin === `http://127.0.0.1:${uiPort}`));
    await page.close();
  },
);
