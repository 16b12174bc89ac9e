import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CREATE_RECORD_ID_PREFIX,
  agentJobCreateRecordId,
  agentJobWorkflowId,
  agentJobWorkflowIdIssue,
  quoteVisibility,
} from '../../src/contract/names';

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

  test('an id that leaves no room for its record, counted in UTF-8 bytes, is refused', () => {
    const room = 1000 - CREATE_RECORD_ID_PREFIX.length;
    assert.equal(agentJobWorkflowIdIssue('a'.repeat(room)), undefined);
    assert.match(agentJobWorkflowIdIssue('a'.repeat(room + 1)) ?? '', /at most 979 bytes in UTF-8/);
    assert.match(agentJobWorkflowIdIssue('é'.repeat(room / 2 + 1)) ?? '', /at most 979 bytes/);
  });

  test('a value quoted for a visibility query cannot end its quotes', () => {
    assert.equal(quoteVisibility(`it's \\ here`), `'it\\'s \\\\ here'`);
  });
});
