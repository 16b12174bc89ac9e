import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startStack, type TestStack } from '../../dev/stack';
import { startTracing, type Tracing } from '../../src/tracing/setup';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../dev/otlp-receiver';
import { eventually, requestsOf, uniqueProject } from '../workflows/agent-job-harness';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

// One job, one trace: the CLI's `job start` span is the root; the worker (in this process, traced from the same
// OTEL_* environment) adds the workflow, its activities and each HTTP request to the service, all exported to an
// OTLP/HTTP receiver as JSON.
let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let stack: TestStack;
let otelEnv: Record<string, string>;

before(async () => {
  receiver = await startOtlpReceiver();
  otelEnv = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  Object.assign(process.env, otelEnv, { OTEL_SERVICE_NAME: 'docs-agent-worker-test' });
  tracing = await startTracing('docs-agent-worker');
  assert.ok(tracing, 'OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on');
  const workerTracing = tracing;
  stack = await startStack({
    name: 'tracing',
    simulator: { jobs: { durationMs: 3000 } },
    worker: () => ({ tracing: workerTracing }),
  });
});

after(async () => {
  await stack?.stop();
  await tracing?.shutdown();
  await receiver?.close();
});

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('tracing: one agent job is one trace', () => {
  test('CLI root, workflow, activities and HTTP spans share one trace id; the service saw its traceparent', async () => {
    const projectId = uniqueProject('traced');
    const cli = run(
      process.execPath,
      [
        ...['--import', 'tsx', path.join(ROOT, 'src/starter.ts'), 'job', 'start'],
        ...['--project', projectId, '--prompt', 'Trace me', '--key', 'one-trace'],
        ...['--initial-interval', '1s', '--max-interval', '1s', '--wait', '--json'],
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          TEMPORAL_ADDRESS: stack.env.address,
          OTEL_SERVICE_NAME: 'docs-agent-cli-test',
          ...otelEnv,
        },
      },
    );
    // A follow-up while the job runs: its message request belongs to the job's trace too.
    const job = await eventually(
      () => requestsOf(stack.sim, { projectId, route: 'getJob' }).at(0)?.jobId,
      'the first poll',
    );
    assert.ok(job);
    await stack.client.workflow
      .getHandle(`agent-job/${projectId}/one-trace`)
      .signal('followUp', { prompt: 'And the FAQ', messageId: 'faq' });
    const { stdout } = await cli;
    assert.match(stdout, /\/pull\/\d+/);

    const root = await eventually(
      () => receiver.spans.find((s) => s.name === 'docs-agent job start' && s.parentSpanId === ''),
      'the CLI root span',
    );
    const inTrace = (): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === root.traceId);
    // The workflow's span ends with the run, and the batch exporter sends it shortly after.
    await eventually(() => inTrace().some((s) => s.name === 'RunWorkflow:agentJob'), 'the workflow span');
    const spans = inTrace();
    const names = spans.map((s) => s.name);
    const activities = spans.filter((s) => s.name.startsWith('RunActivity:'));
    assert.ok(activities.length >= 3, names.join(', '));
    const http = spans.filter((s) => s.attributes['http.request.method'] !== undefined);
    for (const span of http) {
      assert.ok(
        activities.some((a) => a.spanId === span.parentSpanId),
        `${span.name} is a child of an activity span`,
      );
    }

    const requests = requestsOf(stack.sim, { projectId });
    for (const route of ['createJob', 'getJob', 'sendMessage'] as const) {
      const ofRoute = requests.filter((r) => r.route === route);
      assert.ok(ofRoute.length > 0, `a ${route} request`);
      for (const request of ofRoute) {
        const [, traceId, spanId] = TRACE_PARENT.exec(request.traceparent ?? '') ?? [];
        assert.equal(traceId, root.traceId, `${route} carried the job's trace`);
        assert.ok(
          http.some((s) => s.spanId === spanId),
          `${route}'s traceparent names its HTTP span`,
        );
      }
    }

    // The key is in no span: not in a name, not in an attribute.
    const secret = stack.sim.apiKey.slice(stack.sim.apiKey.indexOf('_') + 1);
    for (const span of receiver.spans) {
      const text = JSON.stringify(span);
      assert.ok(!text.includes(secret), `${span.name} holds no key`);
    }
  });
});
