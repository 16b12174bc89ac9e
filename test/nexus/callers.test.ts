import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client } from '@temporalio/client';
import { HandlerError } from 'nexus-rpc';
import { Worker } from '@temporalio/worker';
import { ensureNexusEndpoint } from '../../src/client/setup';
import { WorkflowType, agentJobWorkflowId } from '../../src/contract/names';
import { documentFeature, exportVisitors } from '../../examples/nexus-callers/caller-workflows';
import { useStack } from '../helpers/stack';
import { freePortSync } from '../helpers/ports';
import { testPython } from '../helpers/python';
import { eventually, projectWithJobs, requestsOf } from '../workflows/agent-job-harness';

// Callers in another namespace (`callers`) run the worker's workflows through the Nexus endpoint `docs-agent`,
// on a real dev server: a Python workflow (official SDK) and a TypeScript one, the examples the README gives.

const CALLERS = 'callers';
const EXAMPLES = path.resolve(__dirname, '../../examples/nexus-callers');
const run = promisify(execFile);

function withClientPackageAlias<C extends { resolve?: { alias?: unknown } }>(config: C): C {
  const alias = { '@docs-agent/client/nexus': path.resolve(__dirname, '../../src/client/nexus-caller.ts') };
  return {
    ...config,
    resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as object), ...alias } },
  };
}

const HTTP_PORT = freePortSync();
const stack = useStack({
  name: 'nexus',
  temporal: { namespaces: [CALLERS], httpPort: HTTP_PORT },
  simulator: { jobs: { durationMs: 1500 } },
});

describe('Nexus service docs-agent, called from the namespace callers', () => {
  let callers: Client;
  let callerWorker: Worker;
  let callerRun: Promise<void>;
  let endpointId: string;
  const taskQueue = 'ts-callers';

  before(async () => {
    const endpoint = await ensureNexusEndpoint(stack.client, { targetNamespace: 'default' });
    assert.equal(endpoint.created, true);
    endpointId = endpoint.id;
    assert.equal((await ensureNexusEndpoint(stack.client)).created, false, 'a second setup changes nothing');
    callers = new Client({ connection: stack.client.connection, namespace: CALLERS });
    callerWorker = await Worker.create({
      connection: stack.env.nativeConnection,
      namespace: CALLERS,
      taskQueue,
      workflowsPath: require.resolve('../../examples/nexus-callers/caller-workflows'),
      // What installing @docs-agent/client gives a caller; here, the same module from the sources it is built of.
      bundlerOptions: { webpackConfigHook: withClientPackageAlias },
    });
    callerRun = callerWorker.run();
  });

  after(async () => {
    callerWorker?.shutdown();
    await callerRun;
  });

  test('a Python workflow runs agentJob through the endpoint and gets the PR link', async () => {
    const projectId = projectWithJobs(stack.sim, 'nexus-python', 1500);
    const { stdout } = await run(
      testPython(),
      [
        path.join(EXAMPLES, 'caller.py'),
        ...['--address', stack.env.address, '--namespace', CALLERS],
        ...['--project', projectId, '--prompt', 'Document the Nexus service'],
      ],
      { timeout: 120_000 },
    );
    const { prLink } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { prLink?: string };
    assert.match(prLink ?? '', /^https?:\/\/\S+$/);
    const [create] = requestsOf(stack.sim, { projectId, route: 'createJob' });
    assert.ok(create, 'the job was created');
    const jobs = await workflowsOf(stack.client, WorkflowType.agentJob, projectId);
    assert.equal(jobs.length, 1, 'one agentJob in the worker namespace');
    assert.match(jobs[0] ?? '', new RegExp(`^${agentJobWorkflowId(projectId, 'nexus-')}`));
  });

  test('a TypeScript workflow runs agentJob and visitorsExport; a repeated request starts nothing twice', async () => {
    const projectId = projectWithJobs(stack.sim, 'nexus-ts', 1500);
    const prLink = await callers.workflow.execute(documentFeature, {
      taskQueue,
      workflowId: `document-feature-${projectId}`,
      args: [{ projectId, prompt: 'Document the TypeScript caller' }],
    });
    assert.match(prLink ?? '', /^https?:\/\/\S+$/);
    assert.equal(requestsOf(stack.sim, { projectId, route: 'createJob' }).length, 1);

    const files = await callers.workflow.execute(exportVisitors, {
      taskQueue,
      workflowId: `export-visitors-${projectId}`,
      args: [{ projectId, dateFrom: '2026-11-01', dateTo: '2026-11-02' }],
    });
    assert.ok(files.length >= 2, `files: ${files.join(', ')}`);
    assert.ok(files.some((file) => file.endsWith('manifest.json')));
    assert.deepEqual(await workflowsOf(stack.client, WorkflowType.visitorsExport, projectId), [
      `visitors-export/${projectId}/2026-11-01_2026-11-02`,
    ]);
  });

  test('a repeated Nexus request (same request id) starts one job', async () => {
    const projectId = projectWithJobs(stack.sim, 'nexus-repeat', 1500);
    const url = `http://127.0.0.1:${HTTP_PORT}/nexus/endpoints/${endpointId}/services/docs-agent/agentJob`;
    const startOnce = async () => {
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Nexus-Request-Id': `repeat-${projectId}` },
        body: JSON.stringify({ projectId, prompt: 'Started twice, run once' }),
      });
      assert.equal(answer.status, 201, await answer.clone().text());
      const started = (await answer.json()) as { token?: string; operationToken?: string; state?: string };
      assert.equal(started.state, 'running');
      return started.token ?? started.operationToken;
    };
    const [first, second] = [await startOnce(), await startOnce()];
    assert.ok(first, 'an operation token');
    assert.equal(second, first, 'the same operation');
    const jobs = await eventually(async () => {
      const ids = await workflowsOf(stack.client, WorkflowType.agentJob, projectId);
      return ids.length > 0 && ids;
    }, 'the job in visibility');
    assert.deepEqual(jobs, [agentJobWorkflowId(projectId, `nexus-repeat-${projectId}`)]);
    await stack.client.workflow.getHandle(jobs[0] ?? '').result();
    assert.equal(requestsOf(stack.sim, { projectId, route: 'createJob' }).length, 1, 'one job created');
  });

  test('bad input is a BAD_REQUEST naming the field, and nothing starts', async () => {
    const projectId = projectWithJobs(stack.sim, 'nexus-bad', 1500);
    await assert.rejects(
      callers.workflow.execute(documentFeature, {
        taskQueue,
        workflowId: `document-feature-bad-${projectId}`,
        args: [{ projectId, prompt: '' }],
      }),
      (error: Error) => {
        const handlerError = chain(error).find((e) => e instanceof HandlerError);
        assert.ok(
          handlerError,
          `a HandlerError in ${chain(error)
            .map((e) => e.name)
            .join(' <- ')}`,
        );
        assert.equal(handlerError.type, 'BAD_REQUEST');
        assert.match(handlerError.message, /prompt: must not be empty/);
        return true;
      },
    );
    assert.deepEqual(await workflowsOf(stack.client, WorkflowType.agentJob, projectId), []);
    assert.equal(requestsOf(stack.sim, { projectId }).length, 0, 'nothing sent to the service');
  });
});

/** The error and its causes, outermost first. */
function chain(error: unknown): Error[] {
  const errors: Error[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) errors.push(e);
  return errors;
}

async function workflowsOf(client: Client, type: string, projectId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of client.workflow.list({
    query: `WorkflowType = '${type}' AND DocsProjectId = '${projectId}'`,
  })) {
    ids.push(w.workflowId);
  }
  return ids.sort();
}
