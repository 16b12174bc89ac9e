import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startAgentJob, awaitAgentJob } from '../../src/client/agent-job';
import { budgetLimiterWorkflowId } from '../../src/contract/budget';
import { ApiKey } from '../../src/docs-api/api-key';
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

    // The project's budget limiter, started by the job's first ask, never ends: its page says what it is.
    const limiterId = budgetLimiterWorkflowId('agent', new ApiKey(stack.sim.apiKey).fingerprint(), 'ui-demo');
    await page.goto(`${base}/workflows/${encodeURIComponent(limiterId)}`);
    await page.getByText('User Metadata').first().click();
    // The UI renders the summary and the current details (markdown) in frames of their own.
    let shown = '';
    for (const until = Date.now() + 20_000; !shown.includes('Used in the window') && Date.now() < until;) {
      await page.waitForTimeout(200);
      const frames = page.frames().filter((frame) => frame !== page.mainFrame());
      shown = (
        await Promise.all(
          frames.map((frame) =>
            frame
              .locator('body')
              .innerText()
              .catch(() => ''),
          ),
        )
      ).join('\n');
    }
    const heading = /Agent budget of project ui-demo \(creates and messages\): \d+\/1h/g;
    assert.equal(shown.match(heading)?.length, 2, `its summary, and the first line of its details: ${shown}`);
    assert.match(shown, /Used in the window: \d+ of \d+ · Granted: \d+ · /, 'its current details');
    assert.match(shown, /Queued: none/);
    await page.close();
  },
);
