import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser } from 'playwright-core';
import { startAgentJob, awaitAgentJob } from '../../src/client/agent-job';
import { startSimulator, type Simulator } from '../../dev/simulator';
import { startTemporal } from '../../dev/temporal';
import { startTestWorker, type TestWorker } from '../../dev/worker';
import { freePort } from '../../dev/ports';
import { launchChromium } from '../helpers/browser';

let env: TestWorkflowEnvironment;
let sim: Simulator;
let worker: TestWorker;
let browser: Browser;
let uiPort: number;

before(async () => {
  uiPort = await freePort();
  env = await startTemporal({ ui: true, uiPort });
  sim = await startSimulator({ jobs: { durationMs: 500 } });
  worker = await startTestWorker(env, { service: sim });
  browser = await launchChromium();
});
after(async () => {
  await browser.close();
  await worker.stop();
  await sim.close();
  await env.teardown();
});

test('an operator finds a job by DocsProjectId in the Temporal UI and sees its summary and PR link', async () => {
  const handle = await startAgentJob(
    env.client,
    {
      projectId: 'ui-demo',
      prompt: 'Document the webhooks API\nwith examples',
      polling: { initialInterval: '200ms' },
    },
    { key: 'webhooks' },
  );
  const result = await awaitAgentJob(env.client, handle.workflowId);
  assert.ok(result.prLink);

  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const base = `http://127.0.0.1:${uiPort}/namespaces/default`;
  await page.goto(`${base}/workflows?query=${encodeURIComponent("DocsProjectId = 'ui-demo'")}`);
  await page.getByText(handle.workflowId).first().waitFor({ timeout: 20_000 });

  await page.goto(`${base}/workflows/${encodeURIComponent(handle.workflowId)}`);
  await page.getByText(result.prLink).first().waitFor({ timeout: 20_000 });
  const text = await page.locator('body').innerText();
  assert.match(text, /Document the webhooks API/, "the static summary: the prompt's first line");
  assert.match(text, /createAgentJob/);
  assert.ok(!text.includes(sim.apiKey), 'the API key never reaches the UI');
  await page.close();
});
