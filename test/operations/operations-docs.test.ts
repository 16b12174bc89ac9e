import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { DocsAgentMetrics } from '../../src/operations/metrics';

test('docs/operations.md lists every metric of the worker with its labels', async () => {
  const docs = await fs.readFile(path.resolve(__dirname, '../../docs/operations.md'), 'utf8');
  for (const metric of Object.values(DocsAgentMetrics)) {
    const row = docs.split('\n').find((line) => new RegExp(`^\\|\\s*\`${metric.name}\`\\s*\\|`).test(line));
    assert.ok(row, `${metric.name} in the metrics table`);
    assert.match(row, new RegExp(`\\|\\s*${metric.kind}\\s*\\|`), `${metric.name}: ${metric.kind}`);
    for (const label of metric.labels) assert.ok(row.includes(label), `${metric.name}: label ${label}`);
  }
});
