import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { agentJobStartOptions } from '../../src/client/agent-job';
import { visitorsExportStartOptions } from '../../src/client/visitors-export';

const saved = process.env.TEMPORAL_TASK_QUEUE;
afterEach(() => {
  if (saved === undefined) delete process.env.TEMPORAL_TASK_QUEUE;
  else process.env.TEMPORAL_TASK_QUEUE = saved;
});

test('starts go to TEMPORAL_TASK_QUEUE, as the worker polls it; an explicit taskQueue wins; default docs-agent', () => {
  const job = { projectId: 'acme', prompt: 'Fix the typos' };
  const range = { projectId: 'acme', dateFrom: '2026-11-01', dateTo: '2026-11-02' };
  delete process.env.TEMPORAL_TASK_QUEUE;
  assert.equal(agentJobStartOptions(job, { key: 'k' }).taskQueue, 'docs-agent');
  process.env.TEMPORAL_TASK_QUEUE = 'docs-agent-eu';
  assert.equal(agentJobStartOptions(job, { key: 'k' }).taskQueue, 'docs-agent-eu');
  assert.equal(visitorsExportStartOptions(range).taskQueue, 'docs-agent-eu');
  assert.equal(agentJobStartOptions(job, { key: 'k', taskQueue: 'mine' }).taskQueue, 'mine');
});
