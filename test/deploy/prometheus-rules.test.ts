import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alertRules } from '../helpers/deploy';

test('alert rules: the four the operators need, each with a duration, a severity and a summary', async () => {
  const rules = await alertRules();
  assert.deepEqual(rules.map((rule) => rule.alert).sort(), [
    'DocsAgentJobsFailing',
    'DocsAgentNightlyExportBehind',
    'DocsAgentRateLimited',
    'DocsAgentTaskQueueBacklog',
  ]);
  for (const rule of rules) {
    assert.match(rule.for ?? '', /^\d+[smh]$/, `${rule.alert}: for`);
    assert.ok(['warning', 'critical'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity`);
    assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
  }
  const behind = rules.find((rule) => rule.alert === 'DocsAgentNightlyExportBehind');
  assert.match(behind?.expr ?? '', /docs_agent_nightly_watermark_seconds\) > 2 \* 86400/);
});
