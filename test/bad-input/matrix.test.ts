import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { sendFollowUp, startAgentJob } from '../../src/client/agent-jobs';
import { startVisitorsExport } from '../../src/client/exports';
import { AgentJobFailureType } from '../../src/contract/agent-job';
import { followUpSignal, sendFollowUpUpdate } from '../../src/contract/messages';
import { DEFAULT_TASK_QUEUE, WorkflowType, agentJobWorkflowId } from '../../src/contract/names';
import { InputValidationError, MAX_PROMPT_CHARS } from '../../src/contract/validation';
import { DocsApiClient } from '../../src/docs-api/client';
import type { FaultRule, Simulator } from '../../src/simulator';
import { startStack, type TestStack } from '../helpers/stack';
import { TEST_POLLING, requestsOf, uniqueProject } from '../workflows/agent-job-harness';

// One place for what bad input does at every entry point: a clear error naming the field and the rule, no
// request to the service when the bad input was ours, and nothing lost when the service's answer was bad.
// docs/bad-input.md lists the same cases.

const STARTER = path.resolve(__dirname, '../../src/starter.ts');
let stack: TestStack;
let sim: Simulator;
let client: Client;
let promptFile: string;

before(async () => {
  stack = await startStack({ name: 'bad-input', simulator: { jobs: { durationMs: 1200 } } });
  ({ sim } = stack);
  client = stack.env.client;
  promptFile = path.join(stack.exportDir, 'huge-prompt.txt');
  await fs.writeFile(promptFile, 'x'.repeat(MAX_PROMPT_CHARS + 1));
});
after(() => stack.stop());

const serviceRequests = () => sim.requests().filter((r) => r.route !== 'control').length;

async function workflowCount(): Promise<number> {
  let count = 0;
  for await (const _ of client.workflow.list()) count += 1;
  return count;
}

/** Runs `check` and asserts that neither the service nor Temporal saw a thing. */
async function nothingSent(check: () => Promise<void>): Promise<void> {
  const [requests, workflows] = [serviceRequests(), await workflowCount()];
  await check();
  assert.equal(serviceRequests(), requests, 'a request reached the service');
  assert.equal(await workflowCount(), workflows, 'a workflow was started');
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      { env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: stack.env.address } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const exportArgs = (...extra: string[]) => [
  'export',
  'run',
  '--project',
  'p1',
  '--from',
  '2026-11-01',
  '--to',
  '2026-11-02',
  ...extra,
];

describe('bad input: starter CLI (exit 2, nothing started, nothing sent)', () => {
  const cases: [string, () => string[], RegExp][] = [
    ['empty prompt', () => ['job', 'start', '--project', 'p1', '--prompt', ''], /prompt: must not be empty/],
    [
      'prompt file over the limit',
      () => ['job', 'start', '--project', 'p1', '--prompt-file', promptFile],
      new RegExp(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`),
    ],
    [
      "projectId with '/'",
      () => ['job', 'start', '--project', 'a/b', '--prompt', 'x'],
      /projectId: must start with a letter or digit/,
    ],
    [
      "projectId '..'",
      () => ['job', 'start', '--project', '..', '--prompt', 'x'],
      /projectId: must start with a letter or digit/,
    ],
    [
      "projectId 'a..b'",
      () => ['job', 'start', '--project', 'a..b', '--prompt', 'x'],
      /projectId: must not contain "\.\."/,
    ],
    [
      'projectId with spaces',
      () => ['job', 'start', '--project', 'my project', '--prompt', 'x'],
      /projectId: must start with a letter or digit and contain only/,
    ],
    ['page size 0', () => exportArgs('--page-size', '0'), /pageSize: must be at least 1/],
    ['page size 251', () => exportArgs('--page-size', '251'), /pageSize: must be at most 250/],
    ['concurrency 17', () => exportArgs('--concurrency', '17'), /concurrency: must be at most 16/],
    ['unknown format', () => exportArgs('--format', 'xlsx'), /format/],
    [
      'invalid date 2026-02-30',
      () => ['export', 'run', '--project', 'p1', '--from', '2026-02-30', '--to', '2026-03-02'],
      /dateFrom: must be YYYY-MM-DD/,
    ],
    [
      'inverted dates',
      () => ['export', 'run', '--project', 'p1', '--from', '2026-11-02', '--to', '2026-11-01'],
      /dateTo: must be after dateFrom/,
    ],
  ];
  for (const [name, args, message] of cases) {
    test(`CLI: ${name}`, () =>
      nothingSent(async () => {
        const run = await cli(args());
        assert.equal(run.code, 2, run.stderr);
        assert.match(run.stderr, message);
        assert.match(run.stderr, /Nothing was started/);
      }));
  }

  test('CLI: unknown workflow id -> exit 3, named', () =>
    nothingSent(async () => {
      const run = await cli(['job', 'status', '--workflow-id', 'agent-job/p1/never-started']);
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, /not found: .*agent-job\/p1\/never-started/);
    }));
});

const invalid = (field: string, rule: RegExp) => (error: unknown) =>
  error instanceof InputValidationError &&
  error.issues.some((issue) => issue.field === field && rule.test(issue.rule));

describe('bad input: client module (InputValidationError naming the field, before Temporal)', () => {
  test('client: whitespace-only prompt', () =>
    nothingSent(() =>
      assert.rejects(
        startAgentJob(client, { projectId: 'p1', prompt: ' \n\t ' }, { key: 'k' }),
        invalid('prompt', /must not be empty/),
      ),
    ));

  test("client: a 3 MB prompt (over Temporal's 2 MB payload limit) is refused by our rule, not by Temporal", () =>
    nothingSent(() =>
      assert.rejects(
        startAgentJob(client, { projectId: 'p1', prompt: 'y'.repeat(3 * 1024 * 1024) }, { key: 'k' }),
        invalid('prompt', /must be at most 32000 characters/),
      ),
    ));

  test('client: export concurrency 0', () =>
    nothingSent(() =>
      assert.rejects(
        startVisitorsExport(client, {
          projectId: 'p1',
          dateFrom: '2026-11-01',
          dateTo: '2026-11-02',
          concurrency: 0,
        }),
        invalid('concurrency', /at least 1/),
      ),
    ));

  test("client: export dateFrom 'yesterday'", () =>
    nothingSent(() =>
      assert.rejects(
        startVisitorsExport(client, { projectId: 'p1', dateFrom: 'yesterday', dateTo: '2026-11-02' }),
        invalid('dateFrom', /YYYY-MM-DD/),
      ),
    ));

  test('client: follow-up with an empty prompt and one with a 201-character messageId', async () => {
    const before = serviceRequests();
    await assert.rejects(
      sendFollowUp(client, 'agent-job/p1/none', { prompt: '' }),
      invalid('prompt', /must not be empty/),
    );
    await assert.rejects(
      sendFollowUp(client, 'agent-job/p1/none', { prompt: 'ok', messageId: 'm'.repeat(201) }),
      invalid('messageId', /at most 200/),
    );
    assert.equal(serviceRequests(), before);
  });
});

describe('bad input: the service client itself refuses before sending', () => {
  const docsApi = () => new DocsApiClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const cases: [string, (api: DocsApiClient) => Promise<unknown>, RegExp][] = [
    ['negative offset', (api) => api.getVisitors('p1', { offset: -1 }), /offset: must be at least 0/],
    ['limit 0', (api) => api.getVisitors('p1', { limit: 0 }), /limit: must be at least 1/],
    ['limit 251', (api) => api.getVisitors('p1', { limit: 251 }), /limit: must be at most 250/],
    ['a job id with "/"', (api) => api.getJob('p1', 'a/b'), /jobId: must not contain "\/"/],
  ];
  for (const [name, call, message] of cases) {
    test(`docs-api: ${name}`, async () => {
      const api = docsApi();
      const before = serviceRequests();
      await assert.rejects(call(api), message);
      assert.equal(serviceRequests(), before, 'a request reached the service');
      await api.close();
    });
  }

  test("docs-api: an unknown job id is the service's 404, named, not retried", async () => {
    const api = docsApi();
    await assert.rejects(api.getJob('p1', 'job_unknown'), (error: Error) => {
      assert.equal(error.name, 'NotFoundError');
      assert.match(error.message, /getJob.*404/);
      return true;
    });
    await api.close();
  });
});

/** The ApplicationFailure a workflow failed with. */
async function failureOf(result: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await result.then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, String(error));
  return error.cause;
}

describe('bad input: workflow inputs given straight to Temporal (the workflow checks too)', () => {
  const cases: [string, string, unknown, RegExp][] = [
    [
      'agentJob with projectId "../x"',
      WorkflowType.agentJob,
      { projectId: '../x', prompt: 'x' },
      /projectId/,
    ],
    ['agentJob without a prompt', WorkflowType.agentJob, { projectId: 'p1' }, /prompt: is required/],
    [
      'visitorsExport with pageSize 0',
      WorkflowType.visitorsExport,
      { projectId: 'p1', dateFrom: '2026-11-01', dateTo: '2026-11-02', pageSize: 0 },
      /pageSize: must be at least 1/,
    ],
    [
      'visitorsExport with inverted dates',
      WorkflowType.visitorsExport,
      { projectId: 'p1', dateFrom: '2026-11-03', dateTo: '2026-11-02' },
      /dateTo: must be after dateFrom/,
    ],
  ];
  cases.forEach(([name, type, input, message], i) => {
    test(`raw start: ${name} -> InvalidInput, no request`, async () => {
      const before = serviceRequests();
      const handle = await client.workflow.start(type, {
        taskQueue: DEFAULT_TASK_QUEUE,
        workflowId: `bad-input/raw-${i}`,
        args: [input],
      });
      const failure = await failureOf(handle.result());
      assert.equal(failure.type, AgentJobFailureType.invalidInput);
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, message);
      assert.equal(serviceRequests(), before);
    });
  });
});

describe('bad input: signals and updates to a running job', () => {
  test('update with an empty prompt: rejected by the validator, no trace in history, nothing sent', async () => {
    const projectId = uniqueProject('bad-update');
    const handle = await startAgentJob(
      client,
      { projectId, prompt: 'Job', polling: TEST_POLLING },
      { key: 'u' },
    );
    await assert.rejects(handle.executeUpdate(sendFollowUpUpdate, { args: [{ prompt: ' ' }] }), (error) => {
      assert.ok(error instanceof WorkflowUpdateFailedError);
      assert.match(String((error.cause as Error).message), /prompt: must not be empty/);
      return true;
    });
    const result = await handle.result();
    assert.deepEqual(result.followUps, []);
    const history = await handle.fetchHistory();
    assert.ok(
      !history.events?.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes),
      'a refused update left an accepted event',
    );
    assert.equal(requestsOf(sim, { projectId, route: 'sendMessage' }).length, 0);
  });

  test('signals with an empty prompt or a non-object: recorded as rejected, not sent, the job completes', async () => {
    const projectId = uniqueProject('bad-signal');
    const handle = await startAgentJob(
      client,
      { projectId, prompt: 'Job', polling: TEST_POLLING },
      { key: 's' },
    );
    await handle.signal(followUpSignal, { prompt: '', messageId: 'empty' });
    await (handle.signal as (def: unknown, arg: unknown) => Promise<void>)(followUpSignal, 42);
    await handle.signal(followUpSignal, { prompt: 'A good one', messageId: 'good' });
    const result = await handle.result();
    assert.equal(result.status, 'completed');
    const byId = Object.fromEntries(result.followUps.map((f) => [f.messageId, f]));
    assert.equal(byId.empty?.status, 'rejected');
    assert.match(byId.empty?.error ?? '', /prompt: must not be empty/);
    assert.equal(result.followUps.filter((f) => f.status === 'rejected').length, 2);
    assert.equal(byId.good?.status, 'delivered');
    assert.deepEqual(
      requestsOf(sim, { projectId, route: 'sendMessage' }).map((r) => r.prompt),
      ['A good one'],
    );
  });

  test('a signal to a job id that does not exist: the caller is told, nothing sent', async () => {
    await assert.rejects(
      sendFollowUp(client, agentJobWorkflowId('p1', 'missing'), { prompt: 'hello' }),
      WorkflowNotFoundError,
    );
  });
});

describe("bad input: the service's answers (nothing lost, nothing created twice)", () => {
  const once = (rule: Omit<FaultRule, 'times' | 'projectId'>, projectId: string) =>
    sim.faults.add({ ...rule, projectId, times: 1 });
  const cases: [string, Omit<FaultRule, 'times' | 'projectId'>][] = [
    ['get-job answers malformed JSON', { route: 'getJob', kind: 'malformed', malformed: 'truncated-json' }],
    ['get-job answers not JSON', { route: 'getJob', kind: 'malformed', malformed: 'not-json' }],
    [
      'get-job answers without a content type',
      { route: 'getJob', kind: 'malformed', malformed: 'no-content-type' },
    ],
    ['get-job answers 200 with an HTML body', { route: 'getJob', kind: 'malformed', malformed: 'html-200' }],
    ['get-job answers without the job id', { route: 'getJob', kind: 'drift', drift: 'missing-id' }],
    ['get-job answers wrong types', { route: 'getJob', kind: 'drift', drift: 'wrong-types' }],
    ['get-job answers an unknown status', { route: 'getJob', kind: 'drift', drift: 'unknown-status' }],
  ];
  for (const [name, rule] of cases) {
    test(`service: ${name} -> retried, the job completes, created once`, async () => {
      const projectId = uniqueProject('bad-answer');
      once(rule, projectId);
      const handle = await startAgentJob(
        client,
        { projectId, prompt: name, polling: TEST_POLLING },
        { key: 'j' },
      );
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.equal(sim.stats().jobsCreatedByProject[projectId], 1);
      const answered = requestsOf(sim, { projectId, route: 'getJob' });
      assert.equal(answered.filter((r) => r.fault !== undefined).length, 1, 'the fault was injected');
    });
  }

  test('service: the create answers a 200 with an HTML body -> outcome unknown, reported, never re-sent', async () => {
    const projectId = uniqueProject('bad-create');
    once({ route: 'createJob', kind: 'malformed', malformed: 'html-200' }, projectId);
    const handle = await startAgentJob(
      client,
      { projectId, prompt: 'html', polling: TEST_POLLING },
      { key: 'c' },
    );
    const failure = await failureOf(handle.result());
    assert.equal(failure.type, AgentJobFailureType.createOutcomeUnknown);
    assert.match(failure.message, /malformed|content type|JSON/i);
    assert.equal(requestsOf(sim, { projectId, route: 'createJob' }).length, 1);
  });

  test('service: a visitors page answers HTML once -> retried, the export is whole', async () => {
    const projectId = uniqueProject('bad-page');
    sim.configureProject(projectId, { visitorPaths: 30 });
    once({ route: 'getVisitors', kind: 'malformed', malformed: 'html-200' }, projectId);
    const handle = await startVisitorsExport(client, {
      projectId,
      dateFrom: '2026-11-01',
      dateTo: '2026-11-02',
      pageSize: 10,
    });
    const result = await handle.result();
    assert.equal(result.rows, 30);
    const csv = await fs.readFile(result.files.find((f) => f.endsWith('.csv')) ?? '', 'utf8');
    assert.equal(csv.trim().split('\n').length, 31);
  });
});
