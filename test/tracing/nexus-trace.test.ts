import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { ensureNexusEndpoint } from '../../src/client/setup';
import { startTracing, type Tracing } from '../../src/tracing/setup';
import { documentFeature } from '../../examples/nexus-callers/caller-workflows';
import { startOtlpReceiver, type OtlpReceiver } from '../../dev/otlp-receiver';
import { startStack, type TestStack } from '../../dev/stack';
import { eventually, uniqueProject } from '../workflows/agent-job-harness';

// A caller workflow in another namespace starts agentJob through the Nexus endpoint: the job's workflow, its
// activities and requests join the caller's trace. Both workers are traced from the same OTEL_* environment; the
// caller's worker as a caller team's would be (test/helpers/caller-tracing-interceptors.ts).
const CALLERS = 'callers';
let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let stack: TestStack;
let callerWorker: Worker;
let callerRun: Promise<void>;

before(async () => {
  receiver = await startOtlpReceiver();
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'docs-agent-nexus-test',
  });
  tracing = await startTracing('docs-agent-worker');
  assert.ok(tracing);
  const workerTracing = tracing;
  stack = await startStack({
    name: 'nexus-trace',
    temporal: { namespaces: [CALLERS] },
    simulator: { jobs: { durationMs: 1000 } },
    worker: () => ({ tracing: workerTracing }),
  });
  await ensureNexusEndpoint(stack.client, { targetNamespace: 'default' });
  callerWorker = await Worker.create({
    connection: stack.env.nativeConnection,
    namespace: CALLERS,
    taskQueue: 'traced-callers',
    workflowsPath: require.resolve('../../examples/nexus-callers/caller-workflows'),
    interceptors: { workflowModules: [require.resolve('../helpers/caller-tracing-interceptors')] },
    sinks: workerTracing.worker.sinks,
  });
  callerRun = callerWorker.run();
});

after(async () => {
  callerWorker?.shutdown();
  await callerRun;
  await stack?.stop();
  await tracing?.shutdown();
  await receiver?.close();
});

test('a job started through Nexus by a traced caller workflow shares the caller’s trace id', async () => {
  assert.ok(tracing);
  const callers = new Client({
    connection: stack.client.connection,
    namespace: CALLERS,
    interceptors: { workflow: tracing.clientInterceptors },
  });
  const projectId = uniqueProject('nexus-traced');
  const prLink = await callers.workflow.execute(documentFeature, {
    taskQueue: 'traced-callers',
    workflowId: `caller/${projectId}`,
    args: [{ projectId, prompt: 'Trace me across namespaces', polling: { initialInterval: '300ms' } }],
  });
  assert.match(prLink ?? '', /\/pull\/\d+/);

  const caller = await eventually(
    () => receiver.spans.find((s) => s.name === 'RunWorkflow:documentFeature'),
    "the caller workflow's span",
  );
  const job = await eventually(
    () => receiver.spans.find((s) => s.name === 'RunWorkflow:agentJob'),
    "the job workflow's span",
  );
  assert.equal(job.traceId, caller.traceId, 'one trace from the caller to the job');
  const inTrace = receiver.spans.filter((s) => s.traceId === caller.traceId).map((s) => s.name);
  assert.ok(
    inTrace.some((name) => name.startsWith('StartNexusOperation')),
    inTrace.join(', '),
  );
  assert.ok(
    inTrace.some((name) => name === 'RunActivity:createAgentJob'),
    inTrace.join(', '),
  );
  assert.ok(
    inTrace.some((name) => name.startsWith('POST ')),
    'the create request: ' + inTrace.join(', '),
  );
});
