import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startAgentJob, awaitAgentJob } from '../../src/client/agent-job';
import { freePort } from '../../dev/ports';
import { startUiStack, uiTestsSkipped, type UiStack } from '../helpers/browser';

// Skipped without Chromium, except in CI (see uiTestsSkipped).
const skip = uiTestsSkipped();
let ui: UiStack | undefined;
let uiPort: number;

before(async () => {
  if (skip) return;
  uiPort = await freePort();
  ui = await startUiStack({
    name: 'ui',
    temporal: { ui: true, uiPort },
    simulator: { jobs: { durationMs: 500 } },
  });
});
after(() => ui?.stop());

test(
  'an operator finds a job by DocsProjectId in the Temporal UI and sees its summary and PR link',
  { skip },
  async () => {
    assert.ok(ui, 'started by the before hook');
    const { browser, stack } = ui;
    const handle = await startAgentJob(
      stack.client,
      {
        projectId: 'ui-demo',
        prompt: 'Document the webhooks API\nwith examples',
        polling: { initialInterval: '200ms' },
      },
      { key: 'webhooks' },
    );
    const result = await awaitAgentJob(stack.client, handle.workflowId);
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
    assert.ok(!text.includes(stack.sim.apiKey), 'the API key never reaches the UI');
    await page.close();
  },
);
