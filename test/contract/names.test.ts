import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentJobCreateRecordId } from '../../src/client/agent-job-runs';
import { agentJobWorkflowId, agentJobWorkflowIdIssue, quoteVisibility } from '../../src/contract/names';

describe('agent job workflow ids and their create records', () => {
  const ids = [
    'orders-42-docs',
    'b3f1c2de-9a4e-4c1b-8f3e-2d5a7c9e0f11',
    'team/a/job-7',
    agentJobWorkflowId('acme', 'k'),
    'agent-job-created/acme/k',
    'svc/agent-job/acme/k',
  ];

  test('one record id per workflow id, never a job id any caller may use', () => {
    const records = ids.map(agentJobCreateRecordId);
    assert.equal(new Set(records).size, ids.length);
    for (const [i, record] of records.entries()) {
      assert.notEqual(record, ids[i]);
      assert.ok(!ids.includes(record), `${record} is no job's id`);
      assert.ok(agentJobWorkflowIdIssue(record) !== undefined, `${record} is refused as a job id`);
    }
    for (const id of ids) assert.equal(agentJobWorkflowIdIssue(id), undefined, id);
  });

  test('a record id has one shape whatever the workflow id: the prefix and a SHA-256', () => {
    for (const id of [...ids, 'x'.repeat(1000), 'é'.repeat(400)]) {
      assert.match(agentJobCreateRecordId(id), /^agentJobCreateRecord:[0-9a-f]{64}$/);
    }
  });

  test('a value quoted for a visibility query cannot end its quotes', () => {
    assert.equal(quoteVisibility(`it's \\ here`), `'it\\'s \\\\ here'`);
  });
});
