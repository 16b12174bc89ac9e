import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { temporalCliPath } from '../../dev/temporal-cli';
import { freePortSync } from '../helpers/ports';
import { testPython } from '../helpers/python';
import { useStack } from '../helpers/stack';
import { eventually, projectWithJobs, requestsOf, uniqueProject } from '../workflows/agent-job-harness';

// The public contract (docs: README, "Calling it from other services"), driven by a caller that shares nothing
// with this project: test/contract/foreign_caller.py, on the official Temporal Python SDK, and the official
// `temporal` CLI. Every name below is the contract's, spelled out rather than imported, so that renaming one in
// src/ fails here. Each test asserts what the caller observed AND what the documentation service (the
// simulator) received.

const TASK_QUEUE = 'docs-agent';
const NAMESPACE = 'default';
/** Where Nexus callers of other teams run. */
const CALLERS = 'foreign-callers';
const SCRIPT = path.join(__dirname, 'foreign_caller.py');
/** The caller gives up on its own after this long and reports what it saw; the process is killed 30 s later. */
const PYTHON_BUDGET_S = 150;
const exec = promisify(execFile);

const stack = useStack({
  name: 'foreign-caller',
  temporal: { namespaces: [CALLERS], httpPort: freePortSync() },
  simulator: { jobs: { durationMs: 1500 } },
});

// ---- What the caller reports (the contract's shapes, as JSON) ----

interface ApplicationErrorInfo {
  class: string;
  type: string | null;
  message: string;
  nonRetryable: boolean;
  details: unknown[];
}

interface ErrorInfo {
  class: string;
  message: string;
  cause?: ApplicationErrorInfo;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: ErrorInfo };

interface FollowUpRecord {
  messageId: string;
  prompt: string;
  status: string;
}

interface AgentJobResult {
  jobId: string;
  status: string;
  prLink: string | null;
  followUps: FollowUpRecord[];
  polls: number;
  alreadyCreatedBy?: { runId?: unknown };
}

interface AgentJobState {
  jobId: string | null;
  status: string;
  prLink: string | null;
  polls: number;
  nextPollAt: string | null;
  pendingFollowUps: number;
  followUps: FollowUpRecord[];
  lastError: string | null;
}

interface AgentJobAnswer {
  id: string;
  status: string;
  prLink: string | null;
}

interface VisitorsExportResult {
  projectId: string;
  dateFrom: string;
  dateTo: string;
  totals: { human: number; ai: number; total: number };
  rows: number;
  pages: number;
  files: string[];
  warnings: string[];
}

interface ExportProgress {
  pagesDone: number;
  rowsDone: number;
  inFlight: number;
  done: boolean;
}

type JobRun = Outcome<AgentJobResult> & {
  workflowId: string;
  runId?: string;
  startedAt: number;
  endedAt: number;
};

/** Runs one scenario of the Python caller; `onLine` sees each JSON line as it comes. Returns the last line. */
function foreignCaller<T>(
  scenario: string,
  args: string[],
  options: { namespace?: string; onLine?: (line: Record<string, unknown>) => void } = {},
): Promise<T> {
  const argv = [SCRIPT, '--address', stack.env.address, '--namespace', options.namespace ?? NAMESPACE];
  const common = [...argv, '--task-queue', TASK_QUEUE, '--budget', String(PYTHON_BUDGET_S)];
  const child = spawn(testPython(), [...common, scenario, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: (PYTHON_BUDGET_S + 30) * 1000,
  });
  const lines: Record<string, unknown>[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (let end = stdout.indexOf('\n'); end >= 0; end = stdout.indexOf('\n')) {
      const text = stdout.slice(0, end).trim();
      stdout = stdout.slice(end + 1);
      if (!text) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      options.onLine?.(line);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<T>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const last = lines.at(-1);
      if (code === 0 && last) resolve(last as T);
      else {
        const seen = lines.map((l) => show(l).slice(0, 2000)).join('\n');
        reject(
          new Error(`foreign_caller.py ${scenario}: exit ${code ?? signal}\n${seen}\n${stderr.slice(-4000)}`),
        );
      }
    });
  });
}

const show = (value: unknown): string => JSON.stringify(value, null, 1);

function valueOf<T>(outcome: Outcome<T>, what: string): T {
  assert.ok(outcome.ok, `${what} failed: ${show(outcome)}`);
  return outcome.value;
}

/** The ApplicationError a call failed with, as Python saw it (the SDK's error, then its cause). */
function failureOf(outcome: Outcome<unknown>, what: string): ApplicationErrorInfo {
  assert.ok(!outcome.ok, `${what} should have failed: ${show(outcome)}`);
  assert.ok(outcome.error.cause, `${what}: an ApplicationError cause in ${show(outcome.error)}`);
  return outcome.error.cause;
}

/** `<type or error class>: <message>`, short. */
function briefly(error: ErrorInfo): string {
  return `${error.cause?.type ?? error.class}: ${error.cause?.message ?? error.message}`.slice(0, 160);
}

const PR_LINK = /^https?:\/\/\S+$/;

function createsOf(projectId: string) {
  return requestsOf(stack.sim, { projectId, route: 'createJob' });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

function utcDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

describe('the contract, from a foreign caller', { concurrency: true }, () => {
  test('agentJob under caller-chosen ids of any shape: each creates one job and returns its PR link', async () => {
    const projectId = projectWithJobs(stack.sim, 'foreign-ids', 1500);
    const first: [string, string][] = [
      `orders-42-docs-${projectId}`,
      randomUUID(),
      `team/a/job-7-${projectId}`,
      `svc/agent-job/${projectId}/y`,
      `agent-job/${projectId}/x`,
      `agent-job-created/${projectId}/z`,
    ].map((id) => [id, `Write the docs asked by ${id}`]);
    // Started once the first wave ended: ids that an `agent-job/` id's bookkeeping could be mistaken for.
    const then: [string, string][] = [`agent-job-created/${projectId}/x`, `agent-job/${projectId}/z`].map(
      (id) => [id, `Write the docs asked by ${id}`],
    );
    const { jobs } = await foreignCaller<{ jobs: JobRun[] }>('jobs', [
      '--project',
      projectId,
      ...first.flatMap(([id, prompt]) => ['--job', id, prompt]),
      ...then.flatMap(([id, prompt]) => ['--then-job', id, prompt]),
    ]);

    const all = [...first, ...then];
    // Every id's outcome at once: a failure names its type.
    assert.deepEqual(
      jobs.map((j) => [j.workflowId, j.ok ? j.value.status : briefly(j.error)]),
      all.map(([id]) => [id, 'completed']),
    );
    const jobIds = new Set<string>();
    for (const [workflowId, prompt] of all) {
      const run = jobs.find((j) => j.workflowId === workflowId);
      assert.ok(run);
      const result = valueOf(run, `agentJob ${workflowId}`);
      assert.equal(result.status, 'completed', workflowId);
      assert.match(result.prLink ?? '', PR_LINK, workflowId);
      assert.deepEqual(result.followUps, [], workflowId);
      assert.equal(typeof result.polls, 'number');
      const creates = createsOf(projectId).filter((r) => r.prompt === prompt);
      assert.equal(creates.length, 1, `${workflowId}: one createJob with its prompt`);
      assert.equal(stack.sim.job(result.jobId)?.prompt, prompt, `${workflowId} reports the job it created`);
      jobIds.add(result.jobId);
    }
    assert.equal(jobIds.size, all.length, 'a job of its own per workflow id');
    assert.equal(createsOf(projectId).length, all.length, 'one createJob per workflow id, no other');
  });

  test('follow-ups by signal and update, once per messageId; getState; the result lists them', async () => {
    const projectId = projectWithJobs(stack.sim, 'foreign-follow-ups', 600_000);
    const workflowId = `orders-followups-${projectId}`;
    let steered: Record<string, unknown> | undefined;
    let messagesWhenSteered: string[] = [];
    const done = await foreignCaller<{
      result: Outcome<AgentJobResult>;
      finalState: Outcome<AgentJobState>;
    }>('follow-ups', ['--project', projectId, '--id', workflowId], {
      onLine(line) {
        if (line.phase !== 'steered') return;
        steered = line;
        messagesWhenSteered = requestsOf(stack.sim, { projectId, route: 'sendMessage' }).map(
          (r) => r.prompt ?? '',
        );
        const state = line.state as Outcome<AgentJobState>;
        // The job ends only now: every follow-up was sent to an active job.
        if (state.ok && state.value.jobId) stack.sim.completeJob(state.value.jobId, 'completed');
      },
    });
    assert.ok(steered, 'the caller reported its follow-ups');
    const s = steered as {
      signal: Outcome<null>;
      update: Outcome<AgentJobAnswer>;
      duplicate: Outcome<unknown>;
      duplicateOfSignal: Outcome<unknown>;
      duplicateSignal: Outcome<null>;
      empty: Outcome<unknown>;
      refusedIdAgain: Outcome<AgentJobAnswer>;
      state: Outcome<AgentJobState>;
    };
    valueOf(s.signal, 'signal followUp');
    const answer = valueOf(s.update, 'update sendFollowUp');
    valueOf(s.duplicateSignal, 'signal followUp with a messageId already sent');
    const state = valueOf(s.state, 'query getState');
    assert.deepEqual(
      Object.keys(state)
        .filter((k) => STATE_FIELDS.includes(k))
        .sort(),
      [...STATE_FIELDS].sort(),
    );
    assert.equal(typeof state.jobId, 'string');
    const jobId = state.jobId as string;
    assert.equal(state.status, 'active');
    assert.equal(state.pendingFollowUps, 0);
    assert.equal(state.lastError, null);
    assert.equal(typeof state.polls, 'number');
    assert.deepEqual(
      state.followUps.map((f) => [f.messageId, f.status]),
      [
        ['faq', 'delivered'],
        ['glossary', 'delivered'],
        ['changelog', 'delivered'],
      ],
    );

    assert.equal(answer.id, jobId, 'the update returns the job as the service answered');
    assert.equal(answer.status, 'active');
    assert.ok('prLink' in answer);
    for (const [what, refused] of [
      ['a messageId the update sent', s.duplicate],
      ['a messageId the signal sent', s.duplicateOfSignal],
    ] as const) {
      const failure = failureOf(refused, `sendFollowUp with ${what}`);
      assert.equal(failure.type, 'FollowUpNotAccepted', what);
    }
    const empty = failureOf(s.empty, 'sendFollowUp with an empty prompt');
    assert.equal(empty.type, 'InvalidInput');
    assert.match(empty.message, /prompt/);
    assert.equal(valueOf(s.refusedIdAgain, 'the refused messageId sent again').id, jobId);
    // What the service received: each message once, in order; nothing of the refused ones.
    const sent = ['Also the FAQ', 'And the glossary', 'Then the changelog'];
    assert.deepEqual(messagesWhenSteered, sent);
    assert.deepEqual(
      stack.sim.job(jobId)?.messages.map((m) => m.prompt),
      sent,
    );

    const result = valueOf(done.result, 'agentJob result');
    assert.equal(result.jobId, jobId);
    assert.equal(result.status, 'completed');
    assert.match(result.prLink ?? '', PR_LINK);
    assert.equal(typeof result.polls, 'number');
    assert.deepEqual(result.followUps, [
      { messageId: 'faq', prompt: 'Also the FAQ', status: 'delivered' },
      { messageId: 'glossary', prompt: 'And the glossary', status: 'delivered' },
      { messageId: 'changelog', prompt: 'Then the changelog', status: 'delivered' },
    ]);
    const finalState = valueOf(done.finalState, 'getState once completed');
    assert.equal(finalState.status, 'completed');
    assert.equal(finalState.prLink, result.prLink);
    assert.equal(
      requestsOf(stack.sim, { projectId, route: 'sendMessage' }).length,
      3,
      'three messages in all',
    );
    assert.equal(createsOf(projectId).length, 1);
  });

  test('typed failures: InvalidInput, AgentJobFailed, AgentJobKeyInUse; the same prompt answers from the job', async () => {
    const invalidProject = projectWithJobs(stack.sim, 'foreign-invalid', 1500);
    const failedProject = projectWithJobs(stack.sim, 'foreign-failed', 1500, 'failed');
    const reuseOrders = projectWithJobs(stack.sim, 'foreign-reuse', 1500);
    const reuseClientShape = projectWithJobs(stack.sim, 'foreign-reuse-client', 1500);
    const reused: [string, string][] = [
      [reuseOrders, `orders-42-docs-${reuseOrders}`],
      [reuseClientShape, `agent-job/${reuseClientShape}/reuse`],
    ];
    const observed = await foreignCaller<{
      invalid: JobRun;
      failed: JobRun;
      reuse: {
        project: string;
        workflowId: string;
        first: JobRun;
        otherPrompt: JobRun;
        samePrompt: JobRun;
      }[];
    }>('failures', [
      ...['--invalid-project', invalidProject, '--failed-project', failedProject],
      ...reused.flatMap(([project, id]) => ['--reuse', project, id]),
    ]);

    const invalid = failureOf(observed.invalid, 'agentJob with an empty prompt');
    assert.equal(invalid.type, 'InvalidInput');
    assert.equal(invalid.nonRetryable, true);
    assert.match(invalid.message, /prompt/);
    assert.deepEqual(requestsOf(stack.sim, { projectId: invalidProject }), [], 'nothing sent for bad input');

    const failed = failureOf(observed.failed, 'agentJob whose job fails');
    assert.equal(failed.type, 'AgentJobFailed');
    assert.equal(failed.nonRetryable, true);
    const data = failed.details[0] as Partial<AgentJobResult> | undefined;
    assert.equal(data?.status, 'failed', `the failure carries the result: ${show(failed.details)}`);
    assert.equal(typeof data.jobId, 'string');
    assert.deepEqual(data.followUps, []);
    assert.equal(typeof data.polls, 'number');
    assert.equal(stack.sim.job(data.jobId ?? '')?.status, 'failed');
    assert.equal(stack.sim.job(data.jobId ?? '')?.projectId, failedProject);
    assert.equal(createsOf(failedProject).length, 1);

    for (const { project, workflowId, first, otherPrompt, samePrompt } of observed.reuse) {
      const earlier = valueOf(first, `first run of ${workflowId}`);
      assert.equal(earlier.status, 'completed');
      assert.equal(createsOf(project).length, 1);

      const inUse = failureOf(otherPrompt, `a new run of ${workflowId} with another prompt`);
      assert.equal(inUse.type, 'AgentJobKeyInUse', workflowId);
      assert.equal(inUse.nonRetryable, true);
      assert.ok(inUse.message.includes(earlier.jobId), `"${inUse.message}" names job ${earlier.jobId}`);
      assert.ok(otherPrompt.endedAt - otherPrompt.startedAt < 20_000, 'it fails at once');
      const sentMeanwhile = requestsOf(stack.sim, { projectId: project }).filter(
        (r) => r.at >= first.endedAt && r.at <= samePrompt.startedAt,
      );
      assert.deepEqual(sentMeanwhile, [], `${workflowId}: the refused run sent nothing`);

      const again = valueOf(samePrompt, `a new run of ${workflowId} with the same prompt`);
      assert.equal(again.jobId, earlier.jobId, 'the earlier job');
      assert.equal(again.status, 'completed');
      assert.equal(again.prLink, earlier.prLink);
      assert.equal(typeof again.alreadyCreatedBy, 'object', `alreadyCreatedBy in ${show(again)}`);
      assert.equal(typeof again.alreadyCreatedBy?.runId, 'string');
      assert.notEqual(again.alreadyCreatedBy?.runId, '');
      assert.equal(createsOf(project).length, 1, `${workflowId}: one createJob in all`);
      // The follow-up the first run delivered is not sent again by the run started again; a new one is.
      const messages = requestsOf(stack.sim, { projectId: project, route: 'sendMessage' }).map(
        (r) => r.prompt,
      );
      assert.deepEqual(messages, ['Add examples', 'And the errors'], `${workflowId}: each message once`);
      assert.deepEqual(
        again.followUps.map((f) => [f.messageId, f.status]),
        [
          ['examples', 'delivered'],
          ['errors', 'delivered'],
        ],
      );
    }
  });

  test('visitorsExport: getProgress while it runs, the result, the files and the pages requested', async () => {
    const projectId = uniqueProject('foreign-export');
    // Slow pages, so that the caller sees the export run.
    stack.sim.faults.add({ route: 'getVisitors', projectId, kind: 'latency', latencyMs: 300 });
    const workflowId = `orders-export-${projectId}`;
    const [dateFrom, dateTo] = ['2026-11-01', '2026-11-02'];
    const observed = await foreignCaller<{
      result: Outcome<VisitorsExportResult>;
      progress: (ExportProgress | Outcome<unknown>)[];
      progressAfter: Outcome<ExportProgress>;
      listed: string[];
    }>('export', ['--project', projectId, '--id', workflowId, '--date-from', dateFrom, '--date-to', dateTo]);

    const result = valueOf(observed.result, 'visitorsExport');
    assert.equal(result.projectId, projectId);
    assert.equal(result.dateFrom, dateFrom);
    assert.equal(result.dateTo, dateTo);
    assert.equal(result.rows, 120, 'the simulator has 120 paths a project');
    assert.equal(result.pages, 3, 'pages of 50');
    assert.deepEqual(Object.keys(result.totals).sort(), ['ai', 'human', 'total']);
    assert.deepEqual(result.warnings, []);

    const folder = path.join(stack.exportDir, projectId, `${dateFrom}_${dateTo}`);
    assert.deepEqual(result.files.map((f) => path.relative(folder, f)).sort(), [
      'manifest.json',
      'totals.json',
      'visitors.ndjson',
    ]);
    const ndjson = await fs.readFile(path.join(folder, 'visitors.ndjson'), 'utf8');
    assert.equal(ndjson.trim().split('\n').length, 120);
    // Staged pages live under the destination too (named after the export): none may remain.
    assert.deepEqual(
      (await filesUnder(stack.exportDir)).filter((f) => new RegExp(`${projectId}(?!\\d)`).test(f)).sort(),
      [...result.files].sort(),
      'no staged page remains',
    );

    const snapshots = observed.progress as ExportProgress[];
    for (const p of snapshots) {
      assert.deepEqual(
        [typeof p.pagesDone, typeof p.rowsDone, typeof p.inFlight, typeof p.done],
        ['number', 'number', 'number', 'boolean'],
        `getProgress: ${show(p)}`,
      );
    }
    assert.ok(
      snapshots.some((p) => !p.done),
      `seen while running: ${show(snapshots.slice(0, 3))}`,
    );
    const pages = snapshots.map((p) => p.pagesDone);
    assert.deepEqual(
      pages,
      [...pages].sort((a, b) => a - b),
      'pagesDone never goes back',
    );
    const after = valueOf(observed.progressAfter, 'getProgress once done');
    assert.deepEqual(
      { pagesDone: after.pagesDone, rowsDone: after.rowsDone, inFlight: after.inFlight, done: after.done },
      { pagesDone: 3, rowsDone: 120, inFlight: 0, done: true },
    );
    assert.deepEqual(observed.listed, [workflowId], 'found by DocsProjectId');

    const visitors = requestsOf(stack.sim, { projectId, route: 'getVisitors' });
    assert.deepEqual(
      visitors.map((r) => [r.query.dateFrom, r.query.dateTo]),
      visitors.map(() => [dateFrom, dateTo]),
    );
    assert.deepEqual(
      visitors.map((r) => Number(r.query.offset ?? 0)).sort((a, b) => a - b),
      [0, 0, 50, 100],
      'the pages, and page 0 again: the end check',
    );
  });

  test('visitorsNightly, started by a Schedule the official temporal CLI made, exports yesterday', async () => {
    const cli = temporalCliPath();
    assert.ok(cli, 'the official temporal CLI (TEMPORAL_CLI_PATH or PATH) is needed');
    const projectId = uniqueProject('foreign-nightly');
    const scheduleId = `foreign-nightly-${projectId}`;
    const common = ['--address', stack.env.address, '--namespace', NAMESPACE, '--schedule-id', scheduleId];
    await exec(cli, [
      ...['schedule', 'create', ...common, '--cron', '0 3 * * *'],
      ...['--workflow-id', `${scheduleId}/run`, '--type', 'visitorsNightly', '--task-queue', TASK_QUEUE],
      ...['--input', JSON.stringify({ projectId })],
    ]);
    try {
      const yesterday = utcDay(-1);
      await exec(cli, ['schedule', 'trigger', ...common]);
      const run = await eventually(
        async () => {
          for await (const w of stack.client.workflow.list({
            query: `TemporalScheduledById = '${scheduleId}'`,
          })) {
            if (w.status.name !== 'RUNNING') return w;
          }
          return undefined;
        },
        'the triggered visitorsNightly run to close',
        90_000,
      );
      assert.equal(run.type, 'visitorsNightly');
      assert.equal(run.status.name, 'COMPLETED');

      const exports = await eventually(async () => {
        const ids: string[] = [];
        const query = `WorkflowType = 'visitorsExport' AND DocsProjectId = '${projectId}'`;
        for await (const w of stack.client.workflow.list({ query })) ids.push(w.workflowId);
        return ids.length > 0 && ids;
      }, 'the nightly run’s visitorsExport in visibility');
      assert.equal(exports.length, 1, `one export: ${exports.join(', ')}`);
      const child = stack.client.workflow.getHandle(exports[0] ?? '');
      assert.equal(
        (await child.describe()).parentExecution?.workflowId,
        run.workflowId,
        'a child of the run',
      );
      const exported = (await child.result()) as VisitorsExportResult;
      const day = exported.dateFrom;
      assert.ok(day === yesterday || day === utcDay(-1), `${day}: the day before the run (UTC)`);
      assert.equal(exported.dateTo, nextDay(day));
      assert.ok(exported.rows > 0);

      const visitors = requestsOf(stack.sim, { projectId, route: 'getVisitors' });
      assert.ok(visitors.length > 0, 'the service was asked for visitors');
      for (const r of visitors) assert.deepEqual([r.query.dateFrom, r.query.dateTo], [day, nextDay(day)]);
      const manifest = path.join(stack.exportDir, projectId, `${day}_${nextDay(day)}`, 'manifest.json');
      assert.ok(exported.files.includes(manifest), `${manifest} in ${exported.files.join(', ')}`);
      await fs.access(manifest);
    } finally {
      await exec(cli, ['schedule', 'delete', ...common]);
    }
    await assert.rejects(exec(cli, ['schedule', 'describe', ...common]), 'the schedule is deleted');
  });

  test('Nexus: a Python workflow in another namespace calls agentJob and visitorsExport of docs-agent', async () => {
    const cli = temporalCliPath();
    assert.ok(cli, 'the official temporal CLI (TEMPORAL_CLI_PATH or PATH) is needed');
    // As an operator does it (the contract's command).
    await exec(cli, [
      ...['operator', 'nexus', 'endpoint', 'create', '--address', stack.env.address],
      ...['--name', 'docs-agent', '--target-namespace', NAMESPACE, '--target-task-queue', TASK_QUEUE],
    ]);
    const jobProject = projectWithJobs(stack.sim, 'foreign-nexus-job', 1500);
    const exportProject = uniqueProject('foreign-nexus-export');
    const [dateFrom, dateTo] = ['2026-11-02', '2026-11-03'];
    const { caller } = await foreignCaller<{
      caller: Outcome<{ agentJob: Outcome<AgentJobResult>; visitorsExport: Outcome<VisitorsExportResult> }>;
    }>(
      'nexus',
      [
        ...['--job-project', jobProject, '--export-project', exportProject],
        ...['--date-from', dateFrom, '--date-to', dateTo],
      ],
      { namespace: CALLERS },
    );
    const { agentJob, visitorsExport } = valueOf(caller, 'the caller workflow');

    const job = valueOf(agentJob, 'Nexus operation agentJob');
    assert.equal(job.status, 'completed');
    assert.match(job.prLink ?? '', PR_LINK);
    assert.equal(createsOf(jobProject).length, 1, 'one createJob');
    assert.equal(stack.sim.job(job.jobId)?.projectId, jobProject);

    const exported = valueOf(visitorsExport, 'Nexus operation visitorsExport');
    assert.equal(exported.projectId, exportProject);
    assert.equal(exported.rows, 120);
    assert.ok(exported.files.some((f) => f.endsWith('manifest.json')));
    for (const file of exported.files) await fs.access(file);
    const visitors = requestsOf(stack.sim, { projectId: exportProject, route: 'getVisitors' });
    assert.ok(visitors.length > 0);
    for (const r of visitors) assert.deepEqual([r.query.dateFrom, r.query.dateTo], [dateFrom, dateTo]);
  });

  test('visibility: jobs found by DocsProjectId, AgentJobId and AgentJobStatus, kept current', async () => {
    // Jobs that stay active until the caller has found them active; then they end.
    const projectId = projectWithJobs(stack.sim, 'foreign-visibility', 600_000);
    const ids = [`orders-vis-a-${projectId}`, `team/vis/b-${projectId}`];
    const observed = await foreignCaller<{
      results: Record<string, Outcome<AgentJobResult>>;
      active: Listed;
      byProject: Listed;
      completed: Listed;
      byJobId: Listed[];
    }>('visibility', ['--project', projectId, ...ids.flatMap((id) => ['--id', id])], {
      onLine(line) {
        if (line.phase !== 'active') return;
        for (const jobId of line.jobIds as (string | null)[])
          if (jobId) stack.sim.completeJob(jobId, 'completed');
      },
    });
    const sorted = [...ids].sort();
    assert.deepEqual(observed.active.found, sorted, observed.active.query);
    assert.deepEqual(observed.byProject.found, sorted, observed.byProject.query);
    assert.deepEqual(observed.completed.found, sorted, observed.completed.query);
    ids.forEach((id, i) => {
      const result = valueOf(observed.results[id] as Outcome<AgentJobResult>, id);
      assert.equal(result.status, 'completed');
      const byJob = observed.byJobId[i];
      assert.ok(byJob, `a listing by the AgentJobId of ${id}`);
      assert.ok(byJob.query.includes(result.jobId), byJob.query);
      assert.deepEqual(byJob.found, [id], byJob.query);
    });
    assert.equal(createsOf(projectId).length, 2);
  });
});

interface Listed {
  query: string;
  found: string[];
}

const STATE_FIELDS = [
  'jobId',
  'status',
  'prLink',
  'polls',
  'nextPollAt',
  'pendingFollowUps',
  'followUps',
  'lastError',
];
