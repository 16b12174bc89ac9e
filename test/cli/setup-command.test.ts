import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { awaitAgentJob, startAgentJob } from '../../src/client/agent-job';
import { grpcStatusOf } from '../../src/client/connect';
import { AgentJobIdKey, AgentJobStatusKey, DocsProjectIdKey } from '../../src/contract/names';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { useStack } from '../helpers/stack';

const STARTER = path.resolve(__dirname, '../../src/starter.ts');

/** A dev server as an existing one is before setup: none of the contract's search attributes. */
const stack = useStack({
  name: 'setup',
  temporal: { searchAttributes: false },
  simulator: { jobs: { durationMs: 300 } },
});

function setup(namespace = 'default'): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, 'setup'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          TEMPORAL_ADDRESS: stack.env.address,
          TEMPORAL_NAMESPACE: namespace,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('docs-agent setup on a server without the search attributes', () => {
  test('a start is refused before; setup registers them, a second setup changes nothing; then jobs run', async () => {
    const input = { projectId: 'setup-acme', prompt: 'Fix typos' };
    await assert.rejects(startAgentJob(stack.client, input, { key: 'before' }), (error: unknown) => {
      // Without setup, the server refuses a start that sets DocsProjectId (gRPC INVALID_ARGUMENT).
      assert.ok(error instanceof Error);
      assert.equal(grpcStatusOf(error), 3, String(error));
      assert.match(String(error.cause), /DocsProjectId/);
      return true;
    });

    const first = await setup();
    assert.equal(first.code, 0, first.stderr);
    assert.equal(
      first.stdout,
      [
        'namespace default: found',
        'DocsProjectId (Keyword): registered now',
        'AgentJobId (Keyword): registered now',
        'AgentJobStatus (Keyword): registered now',
        'ready: workflows on default can set DocsProjectId, AgentJobId, AgentJobStatus',
        '',
      ].join('\n'),
    );
    const second = await setup();
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^DocsProjectId \(Keyword\): already registered$/m);
    assert.match(second.stdout, /^AgentJobId \(Keyword\): already registered$/m);
    assert.match(second.stdout, /^AgentJobStatus \(Keyword\): already registered$/m);
    assert.doesNotMatch(second.stdout, /registered now/);

    const handle = await startAgentJob(
      stack.client,
      { ...input, polling: { initialInterval: '200ms' } },
      { key: 'after' },
    );
    const result = await awaitAgentJob(stack.client, handle.workflowId);
    assert.equal(result.status, 'completed');
    const { typedSearchAttributes } = await handle.describe();
    assert.equal(typedSearchAttributes.get(DocsProjectIdKey), 'setup-acme');
    assert.equal(typedSearchAttributes.get(AgentJobIdKey), result.jobId);
    assert.equal(typedSearchAttributes.get(AgentJobStatusKey), 'completed');
  });

  test('a namespace that does not exist exits 3; an attribute of another type is a conflict (exit 1)', async () => {
    const missing = await setup('no-such-namespace');
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(
      missing.stdout,
      /^namespace no-such-namespace: not found\. Create it \(temporal operator namespace create/,
    );

    await stack.client.workflowService.registerNamespace({
      namespace: 'setup-conflict',
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    await stack.client.connection.operatorService.addSearchAttributes({
      namespace: 'setup-conflict',
      searchAttributes: { AgentJobStatus: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT },
    });
    const conflict = await setup('setup-conflict');
    assert.equal(conflict.code, 1, conflict.stderr);
    assert.match(conflict.stdout, /^DocsProjectId \(Keyword\): registered now$/m);
    assert.match(
      conflict.stdout,
      /^AgentJobStatus \(Keyword\): registered as INDEXED_VALUE_TYPE_TEXT, not Keyword/m,
    );
    assert.match(conflict.stdout, /^not ready: /m);
  });
});
