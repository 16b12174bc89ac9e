import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  ScheduleNotFoundError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { sendFollowUp, sendFollowUpAndWait, startAgentJob } from '../../src/client/agent-job';
import { startVisitorsExport } from '../../src/client/visitors-export';
import { AgentJobActivityFailureType, AgentJobFailureType } from '../../src/contract/agent-job';
import { followUpSignal, sendFollowUpUpdate } from '../../src/contract/messages';
import {
  DEFAULT_TASK_QUEUE,
  WorkflowType,
  agentJobWorkflowId,
  visitorsScheduleId,
} from '../../src/contract/names';
import { InputValidationError } from '../../src/contract/validation';
import { DocsApiClient } from '../../src/docs-api/client';
import { DocsApiFailureType, docsApiDetailsOf } from '../../src/contract/failure-types';
import type { Simulator } from '../../dev/simulator';
import { startStack, type TestStack } from '../../dev/stack';
import { TEST_POLLING, requestsOf, uniqueProject } from '../workflows/agent-job-harness';
import {
  OVER_LIMIT_PROMPT,
  THREE_MB_PROMPT,
  cliCases,
  clientCases,
  createAnswerCases,
  docsApiCases,
  getJobAnswerCases,
  messageAnswerCases,
  rawStartCases,
  signalCases,
  updateCases,
  visitorsAnswerCases,
  type FaultShape,
  type PromptFiles,
} from './cases';

// One place for what bad input does at every entry point: a clear error naming the field and the rule, no
// request to the service and nothing started when the bad input was ours, and nothing lost or created twice
// when the service's answer was bad. The rows are in cases.ts; docs/bad-input.md lists the same cases.

const STARTER = path.resolve(__dirname, '../../src/starter.ts');
let stack: TestStack;
let sim: Simulator;
let client: Client;
let files: PromptFiles;

before(async () => {
  stack = await startStack({ name: 'bad-input', simulator: { jobs: { durationMs: 1200 } } });
  ({ sim } = stack);
  client = stack.env.client;
  files = {
    overLimit: path.join(stack.exportDir, 'over-limit-prompt.txt'),
    threeMb: path.join(stack.exportDir, 'three-mb-prompt.txt'),
    missing: path.join(stack.exportDir, 'no-such-prompt.txt'),
  };
  await fs.writeFile(files.overLimit, OVER_LIMIT_PROMPT);
  await fs.writeFile(files.threeMb, THREE_MB_PROMPT);
});
after(() => stack.stop());

// ---- What "nothing happened" means: no request at the service, no workflow, no schedule ----

const serviceRequests = () => sim.requests().filter((r) => r.route !== 'control').length;

async function countOf(items: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _ of items) count += 1;
  return count;
}

async function workflowExists(workflowId: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      (error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      },
    );
}

async function scheduleExists(projectId: string): Promise<boolean> {
  return client.schedule
    .getHandle(visitorsScheduleId(projectId))
    .describe()
    .then(
      () => true,
      (error: unknown) => {
        if (error instanceof ScheduleNotFoundError) return false;
        throw error;
      },
    );
}

/** Runs `check` and asserts that neither the service nor Temporal saw a thing. */
async function nothingSent(check: () => Promise<void>): Promise<void> {
  const requests = serviceRequests();
  const workflows = await countOf(client.workflow.list());
  const schedules = await countOf(client.schedule.list());
  await check();
  assert.equal(serviceRequests(), requests, 'a request reached the service');
  assert.equal(await countOf(client.workflow.list()), workflows, 'a workflow was started');
  assert.equal(await countOf(client.schedule.list()), schedules, 'a schedule was created');
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      { env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: stack.env.address }, maxBuffer: 1 << 24 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// ---- History helpers ----

async function eventsOf(handle: WorkflowHandle) {
  return (await handle.fetchHistory()).events ?? [];
}

/** The failure message of every retried activity attempt (ActivityTaskStarted carries the last one). */
/**
 * Failures that were retried: by the activity's retry policy (the next attempt's lastFailure), or by the
 * workflow (a page within the budget has one attempt and the workflow asks again: an ActivityTaskFailed).
 */
/** Failures of activity attempts, but not the poll's benign "still running" (each poll of an active job). */
async function retriedActivityFailures(handle: WorkflowHandle): Promise<string[]> {
  return (await eventsOf(handle)).flatMap((e) => {
    const failure =
      e.activityTaskStartedEventAttributes?.lastFailure ?? e.activityTaskFailedEventAttributes?.failure;
    if (
      !failure?.message ||
      failure.applicationFailureInfo?.type === AgentJobActivityFailureType.stillRunning
    )
      return [];
    return [failure.message];
  });
}

/** The ApplicationFailure a workflow failed with. */
async function failureOf(result: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await result.then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, String(error));
  return error.cause;
}

const startJob = (projectId: string, prompt = 'Job') =>
  startAgentJob(client, { projectId, prompt, polling: TEST_POLLING }, { key: 'k' });

const sentMessages = (projectId: string) =>
  requestsOf(sim, { projectId, route: 'sendMessage' }).map((r) => r.prompt);

// ---- The matrix ----

describe(
  `starter CLI: ${cliCases.length} cases (exit 2 "Nothing was started", or 3 not found)`,
  {
    concurrency: 2,
  },
  () => {
    for (const c of cliCases) {
      test(`CLI: ${c.name} -> exit ${c.exit}`, () =>
        nothingSent(async () => {
          const project = uniqueProject('cli');
          const run = await cli(c.args(project, files));
          assert.equal(run.code, c.exit, run.stderr);
          assert.match(run.stderr, c.stderr);
          if (c.exit === 2) assert.match(run.stderr, /Nothing was started/);
          assert.equal(run.stdout, '', 'nothing printed as a result');
          if (c.workflowId) assert.equal(await workflowExists(c.workflowId(project)), false);
          if (c.scheduleOf) assert.equal(await scheduleExists(c.scheduleOf(project)), false);
        }));
    }
  },
);

describe(`client module: ${clientCases.length} cases (InputValidationError naming the field, before Temporal)`, () => {
  for (const c of clientCases) {
    test(`client: ${c.name} -> ${c.field}`, () =>
      nothingSent(async () => {
        const project = uniqueProject('client');
        await assert.rejects(c.call(client, project), (error: unknown) => {
          assert.ok(error instanceof InputValidationError, String(error));
          const issue = error.issues.find((i) => i.field === c.field);
          assert.ok(issue, `no issue for ${c.field}: ${error.message}`);
          assert.match(issue.rule, c.rule);
          assert.ok(error.message.includes(`${c.field}: ${issue.rule}`), error.message);
          return true;
        });
        assert.equal(await workflowExists(agentJobWorkflowId(project, 'k')), false);
        assert.equal(await scheduleExists(project), false);
      }));
  }
});

describe(`service client: ${docsApiCases.length + 1} cases (refused before sending)`, () => {
  let api: DocsApiClient;
  before(() => {
    api = new DocsApiClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  });
  after(() => api.close());

  for (const c of docsApiCases) {
    test(`docs-api: ${c.name} -> ${c.field}`, async () => {
      const before = serviceRequests();
      await assert.rejects(c.call(api, uniqueProject('api')), (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure, String(error));
        assert.equal(error.type, DocsApiFailureType.invalidArgument);
        assert.equal(docsApiDetailsOf(error.details)?.field, c.field);
        assert.match(error.message.split(`invalid argument ${c.field}: `)[1] ?? '', c.rule);
        assert.equal(error.nonRetryable, true);
        return true;
      });
      assert.equal(serviceRequests(), before, 'a request reached the service');
    });
  }

  test("docs-api: getJob of an unknown job id -> the service's 404, named, sent once", async () => {
    const project = uniqueProject('api');
    await assert.rejects(api.getJob(project, 'job_unknown'), (error: ApplicationFailure) => {
      assert.equal(error.type, DocsApiFailureType.notFound);
      assert.match(error.message, /^getJob: not found: .* \| HTTP 404 \| request id req_/);
      return true;
    });
    assert.equal(requestsOf(sim, { projectId: project }).length, 1);
  });
});

describe(
  `raw workflow starts: ${rawStartCases.length + 1} cases (the workflow checks its input too)`,
  {
    concurrency: true,
  },
  () => {
    for (const c of rawStartCases) {
      test(`raw start: ${c.name} -> InvalidInput, no activity, no request`, async () => {
        const project = uniqueProject('raw');
        const handle = await client.workflow.start(c.type, {
          taskQueue: DEFAULT_TASK_QUEUE,
          workflowId: `bad-input/${project}`,
          args: c.args(project),
        });
        const failure = await failureOf(handle.result());
        assert.equal(failure.type, AgentJobFailureType.invalidInput);
        assert.equal(failure.nonRetryable, true);
        assert.match(failure.message, c.message);
        const events = await eventsOf(handle);
        assert.ok(!events.some((e) => e.activityTaskScheduledEventAttributes), 'an activity was scheduled');
        assert.equal(requestsOf(sim, { projectId: project }).length, 0);
      });
    }

    // Why the client checks the prompt's length: past our validation, all a caller gets is Temporal's own refusal,
    // which names no field.
    test("raw start: agentJob with a 3 MB prompt -> Temporal's blob size limit refuses it, nothing started", async () => {
      const project = uniqueProject('raw');
      const workflowId = `bad-input/${project}`;
      await assert.rejects(
        client.workflow.start(WorkflowType.agentJob, {
          taskQueue: DEFAULT_TASK_QUEUE,
          workflowId,
          args: [{ projectId: project, prompt: THREE_MB_PROMPT }],
        }),
        (error: Error) => {
          assert.match(error.message, /Failed to start Workflow/);
          assert.match(String(error.cause), /INVALID_ARGUMENT: Blob data size exceeds limit/);
          return true;
        },
      );
      assert.equal(await workflowExists(workflowId), false);
      assert.equal(requestsOf(sim, { projectId: project }).length, 0);
    });
  },
);

describe(
  `update sendFollowUp sent raw: ${updateCases.length + 1} cases (validator refuses, nothing sent)`,
  {
    concurrency: true,
  },
  () => {
    for (const c of updateCases) {
      test(`update: ${c.name} -> ${c.type}, no update in history, no message, the job completes`, async () => {
        const project = uniqueProject('update');
        const handle = await startJob(project);
        if (c.signalFirst) await handle.signal(followUpSignal, c.signalFirst);
        await assert.rejects(
          (handle.executeUpdate as (def: unknown, options: unknown) => Promise<unknown>)(sendFollowUpUpdate, {
            args: [c.arg],
          }),
          (error: unknown) => {
            assert.ok(error instanceof WorkflowUpdateFailedError, String(error));
            assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
            assert.equal(error.cause.type, c.type);
            assert.match(error.cause.message, c.message);
            return true;
          },
        );
        const result = await handle.result();
        assert.equal(result.status, 'completed');
        const events = await eventsOf(handle);
        assert.ok(
          !events.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes),
          'a refused update left an accepted event',
        );
        assert.deepEqual(sentMessages(project), c.signalFirst ? [c.signalFirst.prompt] : []);
        assert.deepEqual(
          result.followUps.map((f) => f.status),
          c.signalFirst ? ['delivered'] : [],
        );
        assert.equal(sim.stats().jobsCreatedByProject[project], 1);
      });
    }

    test('update: to a workflow that does not exist -> WorkflowNotFoundError, nothing sent', async () => {
      const project = uniqueProject('update');
      await assert.rejects(
        sendFollowUpAndWait(client, agentJobWorkflowId(project, 'missing'), { prompt: 'hello' }),
        WorkflowNotFoundError,
      );
      assert.equal(requestsOf(sim, { projectId: project }).length, 0);
    });
  },
);

describe(
  `signal followUp sent raw: ${signalCases.length + 1} cases (recorded as rejected, not sent)`,
  {
    concurrency: true,
  },
  () => {
    for (const c of signalCases) {
      const outcome = c.error ? 'recorded rejected' : 'ignored';
      test(`signal: ${c.name} -> ${outcome}, not sent, a good follow-up delivered once, the job completes`, async () => {
        const project = uniqueProject('signal');
        const handle = await startJob(project);
        const good = { prompt: 'A good one', messageId: 'good' };
        const send = (arg: unknown) =>
          (handle.signal as (def: unknown, arg: unknown) => Promise<void>)(followUpSignal, arg);
        // A duplicate must follow the original; a bad signal goes first, before the good one.
        for (const arg of c.error ? [c.arg, good] : [good, c.arg]) await send(arg);
        const result = await handle.result();
        assert.equal(result.status, 'completed');
        const byId = new Map(result.followUps.map((f) => [f.messageId, f]));
        assert.equal(byId.get('good')?.status, 'delivered');
        if (c.error) {
          const rejected = byId.get(c.messageId);
          assert.equal(rejected?.status, 'rejected', JSON.stringify(result.followUps));
          assert.match(rejected?.error ?? '', c.error);
          assert.equal(result.followUps.length, 2);
        } else {
          assert.equal(result.followUps.length, 1, 'the duplicate was not recorded');
        }
        assert.deepEqual(sentMessages(project), [good.prompt]);
        assert.equal(sim.stats().jobsCreatedByProject[project], 1);
      });
    }

    test('signal: to a workflow that does not exist -> WorkflowNotFoundError, nothing sent', async () => {
      const project = uniqueProject('signal');
      await assert.rejects(
        sendFollowUp(client, agentJobWorkflowId(project, 'missing'), { prompt: 'hello' }),
        WorkflowNotFoundError,
      );
      assert.equal(requestsOf(sim, { projectId: project }).length, 0);
    });
  },
);

const faultOnce = (fault: FaultShape, projectId: string) => sim.faults.add({ ...fault, projectId, times: 1 });

describe("the service's answers: nothing lost, nothing created twice", { concurrency: true }, () => {
  for (const c of getJobAnswerCases) {
    if (c.outcome === 'rejected') {
      test(`service: get-job answers ${c.name} -> AgentJobPollRejected, read once, created once`, async () => {
        const project = uniqueProject('answer');
        faultOnce(c.fault, project);
        const failure = await failureOf(startJob(project, c.name).then((handle) => handle.result()));
        assert.equal(failure.type, AgentJobFailureType.pollRejected);
        assert.equal(failure.nonRetryable, true);
        assert.match(failure.message, c.failure ?? /./);
        assert.doesNotMatch(failure.message, new RegExp(sim.apiKey), 'the key leaked');
        assert.equal(requestsOf(sim, { projectId: project, route: 'getJob' }).length, 1, 'not retried');
        assert.equal(sim.stats().jobsCreatedByProject[project], 1);
      });
      continue;
    }
    const outcome = c.failure ? 'retried' : 'tolerated';
    test(`service: get-job answers ${c.name} once -> ${outcome}, the job completes, created once`, async () => {
      const project = uniqueProject('answer');
      faultOnce(c.fault, project);
      const handle = await startJob(project, c.name);
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.match(result.prLink ?? '', /\/pull\/\d+$/);
      assert.equal(sim.stats().jobsCreatedByProject[project], 1);
      const polled = requestsOf(sim, { projectId: project, route: 'getJob' });
      assert.equal(polled.filter((r) => r.fault !== undefined).length, 1, 'the fault was injected');
      const failures = await retriedActivityFailures(handle);
      if (c.failure) {
        assert.equal(failures.length, 1, failures.join('\n'));
        assert.match(failures[0] ?? '', c.failure);
        assert.doesNotMatch(failures[0] ?? '', new RegExp(sim.apiKey), 'the key leaked');
      } else {
        assert.deepEqual(failures, [], 'a tolerated answer is not an error');
      }
      if (c.fault.drift === 'unknown-status') {
        // Shown to operators: AgentJobStatus took the unknown value while the job was treated as running.
        const upserted = (await eventsOf(handle)).map((e) =>
          JSON.stringify(
            e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
          ),
        );
        const shown = upserted.some((fields) =>
          fields.includes(Buffer.from('"paused_for_review"').toString('base64')),
        );
        assert.ok(shown, 'AgentJobStatus never showed the unknown status');
      }
    });
  }

  for (const c of createAnswerCases) {
    const expected = {
      'outcome-unknown': 'AgentJobCreateOutcomeUnknown, never re-sent',
      rejected: 'AgentJobCreateRejected, no job',
      completes: 'the job completes, created once',
    }[c.outcome];
    test(`service: create answers ${c.name} -> ${expected}`, async () => {
      const project = uniqueProject('create');
      faultOnce(c.fault, project);
      const handle = await startJob(project, c.name);
      if (c.outcome === 'completes') {
        const result = await handle.result();
        assert.equal(result.status, 'completed');
        const creates = requestsOf(sim, { projectId: project, route: 'createJob' });
        assert.equal(creates.length, 1);
        assert.equal(result.jobId, creates[0]?.jobId, 'the job the service created, not an orphan');
        assert.equal(sim.stats().jobsCreatedByProject[project], 1);
        return;
      }
      const failure = await failureOf(handle.result());
      assert.equal(
        failure.type,
        c.outcome === 'rejected'
          ? AgentJobFailureType.createRejected
          : AgentJobFailureType.createOutcomeUnknown,
      );
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, c.failure ?? /./);
      assert.equal(requestsOf(sim, { projectId: project, route: 'createJob' }).length, 1);
      // Outcome unknown: the service did create it, one job reported as "may exist", never a second one.
      // Rejected (403, 3xx): the service did not act.
      assert.equal(sim.stats().jobsCreatedByProject[project], c.outcome === 'rejected' ? undefined : 1);
      assert.equal(requestsOf(sim, { projectId: project, route: 'getJob' }).length, 0);
    });
  }

  for (const c of messageAnswerCases) {
    test(`service: send-message answers ${c.name} -> follow-up ${c.status}, sent once, the job completes`, async () => {
      const project = uniqueProject('message');
      faultOnce(c.fault, project);
      const handle = await startJob(project);
      await handle.signal(followUpSignal, { prompt: 'Also the FAQ', messageId: 'faq' });
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      const [record] = result.followUps;
      assert.equal(record?.status, c.status);
      assert.match(record?.error ?? '', c.error);
      assert.doesNotMatch(record?.error ?? '', new RegExp(sim.apiKey), 'the key leaked');
      assert.deepEqual(sentMessages(project), ['Also the FAQ'], 'sent exactly once');
      assert.equal(sim.stats().jobsCreatedByProject[project], 1);
    });
  }

  for (const c of visitorsAnswerCases) {
    test(`service: a visitors page answers ${c.name} once -> ${c.failure ? 'retried' : 'tolerated'}, the export is whole`, async () => {
      const project = uniqueProject('page');
      sim.configureProject(project, { visitorPaths: 30 });
      faultOnce(c.fault, project);
      const handle = await startVisitorsExport(client, {
        projectId: project,
        dateFrom: '2026-11-01',
        dateTo: '2026-11-02',
        pageSize: 10,
      });
      const result = await handle.result();
      assert.equal(result.rows, 30);
      assert.deepEqual(result.warnings, []);
      const csv = await fs.readFile(result.files.find((f) => f.endsWith('.csv')) ?? '', 'utf8');
      assert.equal(csv.trim().split('\n').length, 31);
      const failures = await retriedActivityFailures(handle);
      if (c.failure === undefined) {
        assert.deepEqual(failures, [], 'a tolerated page is not an error');
        return;
      }
      assert.equal(failures.length, 1, failures.join('\n'));
      assert.match(failures[0] ?? '', c.failure);
    });
  }
});
