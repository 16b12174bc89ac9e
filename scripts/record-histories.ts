import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { startAgentJob, getAgentJobState } from '../src/client/agent-job';
import { startVisitorsExport } from '../src/client/visitors-export';
import { createVisitorsSchedule } from '../src/client/schedule';
import { agentJobCreateRecordId } from '../src/client/agent-job-runs';
import { visitorsScheduleId } from '../src/contract/names';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { BUDGET_LIMITER_WORKFLOW_TYPE } from '../src/contract/budget';
import { followUpSignal, sendFollowUpUpdate } from '../src/contract/messages';
import { startSimulator, type Simulator } from '../dev/simulator';
import { startTemporal } from '../dev/temporal';
import { startTestWorker, type TestWorker } from '../dev/worker';
import { makeCurrentIfVersioned } from '../dev/worker-version';
import { historyBytes, historyToJson } from '../dev/history-json';

/**
 * Records the histories that test/replay replays:
 * `npx tsx scripts/record-histories.ts [agent-job|visitors-export|nightly|versioning]`.
 * Re-record only when a workflow change is meant to change its commands (and patch running workflows).
 */
const OUT_DIR = path.resolve(__dirname, '../test/replay/histories');

async function waitFor(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  for (let i = 0; i < timeoutMs / 100; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function save(name: string, handle: WorkflowHandle, sim: Simulator): Promise<void> {
  const history = await handle.fetchHistory();
  const secret = sim.apiKey.slice(sim.apiKey.indexOf('_') + 1);
  if (historyBytes(history).includes(secret))
    throw new Error(`the API key leaked into the history of ${name}`);
  fs.writeFileSync(path.join(OUT_DIR, `${name}.json`), historyToJson(history));
  console.log(`${name}.json: ${history.events?.length ?? 0} events`);
}

/** Reads of the job at the simulator: polls happen in activity attempts, which getState counts only at their end. */
function readsOf(sim: Simulator, projectId: string): number {
  return sim.requests().filter((r) => r.route === 'getJob' && r.projectId === projectId).length;
}

/** The agent job's histories: agent-job.json and agent-job-continued-run.json. */
const CURRENT = 'agent-job';

/**
 * A job of about a minute: ~25 polls, a 429 burst on reads, follow-ups by signal (one duplicate) and update, a
 * refused one, a re-sent one. Saved as agent-job.json, with its project's budget limiter as
 * budget-limiter-agent.json (creates and messages granted in order, one at a time), and the create record.
 */
async function recordLongJob(client: Parameters<typeof startAgentJob>[0], sim: Simulator): Promise<void> {
  const projectId = 'replay-long';
  sim.configureProject(projectId, { jobs: { durationMs: 600_000, outcome: 'completed' } });
  sim.faults.add({ route: 'getJob', projectId, kind: 'rateLimit', retryAfter: { seconds: 1 }, times: 2 });
  const handle = await startAgentJob(
    client,
    {
      projectId,
      prompt: 'Rewrite the getting-started guide\nKeep the examples runnable.',
      polling: { initialInterval: '1s', backoffCoefficient: 1.5, maxInterval: '3s', deadline: '10m' },
    },
    { key: 'long' },
  );
  const state = () => getAgentJobState(client, handle.workflowId);
  await waitFor('the job', () => readsOf(sim, projectId) >= 3);
  await handle.signal(followUpSignal, { prompt: 'Also update the FAQ', messageId: 'faq' });
  await handle.signal(followUpSignal, { prompt: 'Also update the FAQ', messageId: 'faq' });
  await handle.executeUpdate(sendFollowUpUpdate, {
    args: [{ prompt: 'Add a troubleshooting section', messageId: 'ts' }],
  });
  sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 409, times: 1 });
  await handle.signal(followUpSignal, { prompt: 'Rename the guide' });
  await waitFor('the refusal', async () => (await state()).followUps.length === 3);
  sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 503, times: 1 });
  await handle.signal(followUpSignal, { prompt: 'Link the changelog', messageId: 'changelog' });
  // Polls back off to 3 s: about 70 s.
  await waitFor('25 polls', () => readsOf(sim, projectId) >= 25, 300_000);
  const { jobId } = await state();
  sim.completeJob(jobId ?? '', 'completed');
  await handle.result();
  await save(CURRENT, handle, sim);
  await save('budget-limiter-agent', await limiterOf(client, projectId), sim);
  await save(
    'agent-job-create-record',
    client.workflow.getHandle(agentJobCreateRecordId(handle.workflowId)),
    sim,
  );
}

/** The agent budget limiter of a project (its id ends with the project; the key's fingerprint comes before). */
/** Passed to limiterOf for the organization's analytics limiter (it has no project). */
const ANALYTICS = '(analytics)';

/** The limiter of a project's agent budget, or with ANALYTICS the analytics limiter. */
async function limiterOf(
  client: Parameters<typeof startAgentJob>[0],
  projectId: string,
): Promise<WorkflowHandle> {
  const query = `WorkflowType = '${BUDGET_LIMITER_WORKFLOW_TYPE}'`;
  for await (const execution of client.workflow.list({ query })) {
    const analytics = projectId === ANALYTICS && execution.workflowId.startsWith('docs-budget/analytics/');
    if (analytics || execution.workflowId.endsWith(`/${projectId}`))
      return client.workflow.getHandle(execution.workflowId);
  }
  throw new Error(`no budget limiter for ${projectId}`);
}

/**
 * A run that continues as new (low threshold) with follow-ups still queued behind a 429. Polls write no events
 * in the poll activity: delivered follow-ups grow the history first, and the run continues as new between
 * them. Recorded as agent-job-continued-run.json.
 */
async function recordContinueAsNew(
  client: Parameters<typeof startAgentJob>[0],
  sim: Simulator,
): Promise<void> {
  const projectId = 'replay-can';
  sim.configureProject(projectId, { jobs: { durationMs: 600_000, outcome: 'completed' } });
  const handle = await startAgentJob(
    client,
    {
      projectId,
      prompt: 'Translate the reference pages',
      polling: { initialInterval: '1s', maxInterval: '1s', deadline: '10m' },
      continueAsNewAfterEvents: 100,
    },
    { key: 'can' },
  );
  const firstRunId = (await handle.describe()).runId;
  await waitFor('the job', async () => (await getAgentJobState(client, handle.workflowId)).jobId !== null);
  for (let i = 1; (await handle.describe()).historyLength < 80; i += 1) {
    await handle.executeUpdate(sendFollowUpUpdate, {
      args: [{ prompt: `Warm-up ${i}`, messageId: `w${i}` }],
    });
  }
  sim.faults.add({
    route: 'sendMessage',
    projectId,
    kind: 'rateLimit',
    retryAfter: { seconds: 10 },
    times: 1,
  });
  await handle.signal(followUpSignal, { prompt: 'Start with the CLI pages', messageId: 'cli' });
  await handle.signal(followUpSignal, { prompt: 'Then the API pages', messageId: 'api' });
  await waitFor('continue-as-new', async () => (await handle.describe()).runId !== firstRunId);
  const { jobId } = await getAgentJobState(client, handle.workflowId);
  await waitFor('the deliveries', async () =>
    (await getAgentJobState(client, handle.workflowId)).followUps.every((f) => f.status === 'delivered'),
  );
  sim.completeJob(jobId ?? '', 'completed');
  await handle.result();
  const firstRun = client.workflow.getHandle(handle.workflowId, firstRunId);
  await save(`${CURRENT}-continued-run`, firstRun, sim);
}

/**
 * An export of 2,000 pages that continues as new once, with a 503 and a 429 on pages of a run; both runs are
 * kept, with the analytics budget's limiter. The budget of the test worker is far above the need: pages come in
 * wide runs, one activity each, paid for by batches of permits; after the 429 the budget binds (a run of one page,
 * one permit each) for a while. Saved as visitors-export-{continued,last}-run.json and
 * budget-limiter-analytics.json.
 */
async function recordExport(client: Parameters<typeof startAgentJob>[0], sim: Simulator): Promise<void> {
  const projectId = 'replay-export';
  sim.configureProject(projectId, { visitorPaths: 20_000 });
  sim.faults.add({ route: 'getVisitors', projectId, kind: 'latency', latencyMs: 10 });
  const handle = await startVisitorsExport(client, {
    projectId,
    dateFrom: '2026-11-01',
    dateTo: '2026-11-02',
    pageSize: 10,
    concurrency: 4,
    continueAsNewAfterEvents: 100,
  });
  const firstRunId = (await handle.describe()).runId;
  const pagesSent = () => sim.requests().filter((r) => r.projectId === projectId).length;
  await waitFor('the first runs', () => pagesSent() >= 40);
  sim.faults.add({ route: 'getVisitors', projectId, kind: 'status', status: 503, times: 1 });
  sim.faults.add({
    route: 'getVisitors',
    projectId,
    kind: 'rateLimit',
    retryAfter: { seconds: 1 },
    times: 1,
  });
  const result = await handle.result();
  if (result.rows !== 20_000) throw new Error(`the export wrote ${result.rows} rows, not 20000`);
  await save('visitors-export-continued-run', client.workflow.getHandle(handle.workflowId, firstRunId), sim);
  await save('visitors-export-last-run', client.workflow.getHandle(handle.workflowId), sim);
  await save('budget-limiter-analytics', await limiterOf(client, ANALYTICS), sim);
}

/**
 * Two nights of a Paris schedule, the second after the spring change's skipped night: the visitorsNightly run that
 * caught up on two days (its plan read from the destination, then the child exports) as visitors-nightly-run.json.
 */
async function recordNightly(client: Parameters<typeof startAgentJob>[0], sim: Simulator): Promise<void> {
  const projectId = 'replay-nightly';
  await createVisitorsSchedule(client, { projectId, at: '02:30', timeZone: 'Europe/Paris' });
  const schedule = client.schedule.getHandle(visitorsScheduleId(projectId));
  const runs = async (): Promise<{ workflowId: string; status: string }[]> => {
    const found: { workflowId: string; status: string }[] = [];
    const query = `TemporalScheduledById = '${visitorsScheduleId(projectId)}'`;
    for await (const run of client.workflow.list({ query })) {
      found.push({ workflowId: run.workflowId, status: run.status.name });
    }
    return found;
  };
  for (const [start, end, count] of [
    ['2026-03-28T01:00:00Z', '2026-03-28T02:00:00Z', 1],
    ['2026-03-30T00:00:00Z', '2026-03-30T01:00:00Z', 2],
  ] as const) {
    await schedule.backfill({
      start: new Date(start),
      end: new Date(end),
      overlap: ScheduleOverlapPolicy.BUFFER_ALL,
    });
    await waitFor('the night', async () => {
      const found = await runs();
      return found.length === count && found.every((run) => run.status === 'COMPLETED');
    });
  }
  const caughtUp =
    (await runs())
      .map((run) => run.workflowId)
      .sort()
      .at(-1) ?? '';
  await save('visitors-nightly-run', client.workflow.getHandle(caughtUp), sim);
  await schedule.delete();
}

/**
 * The analytics limiter on versioned workers across a deploy, on a server of its own (the limiter's id is the
 * organization's): started on v1, then v2 made current and an export asks for a permit, so the v1 run continues
 * as new onto v2. Saved as budget-limiter-version-move.json: the v1 run, with its version-check timers and the
 * continue-as-new that the new target version asks for.
 */
async function recordVersionMove(_client: unknown, sim: Simulator): Promise<void> {
  const env = await startTemporal();
  const taskQueue = 'replay-versioned';
  const workers: TestWorker[] = [];
  const join = async (buildId: string): Promise<void> => {
    const version = { TEMPORAL_DEPLOYMENT_NAME: 'replay', TEMPORAL_WORKER_BUILD_ID: buildId };
    const deploymentVersion = { deploymentName: 'replay', buildId };
    workers.push(await startTestWorker(env, { service: sim, taskQueue, deploymentVersion }));
    await makeCurrentIfVersioned(env.client, version);
  };
  const exportDay = async (day: string, dateTo: string) => {
    const projectId = 'replay-versioned';
    sim.configureProject(projectId, { visitorPaths: 200 });
    const input = { projectId, dateFrom: day, dateTo, pageSize: 50, concurrency: 2 };
    return (await startVisitorsExport(env.client, input, { taskQueue })).result();
  };
  try {
    await join('v1');
    await exportDay('2026-11-01', '2026-11-02');
    const limiter = await limiterOf(env.client, ANALYTICS);
    const firstRunId = (await limiter.describe()).runId;
    await join('v2');
    await exportDay('2026-11-02', '2026-11-03');
    const moved = env.client.workflow.getHandle(limiter.workflowId, firstRunId);
    if ((await moved.describe()).status.name !== 'CONTINUED_AS_NEW')
      throw new Error('the limiter did not move');
    await save('budget-limiter-version-move', moved, sim);
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await env.teardown();
  }
}

async function main(): Promise<void> {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const [env, sim] = await Promise.all([startTemporal(), startSimulator({ jobs: { durationMs: 2000 } })]);
  const worker = await startTestWorker(env, { service: { url: sim.url, apiKey: sim.apiKey } });
  try {
    const recorders = {
      'agent-job': [recordLongJob, recordContinueAsNew],
      'visitors-export': [recordExport],
      nightly: [recordNightly],
      versioning: [recordVersionMove],
    };
    const only = process.argv[2];
    if (only !== undefined && !(only in recorders)) {
      throw new Error(`usage: record-histories.ts [${Object.keys(recorders).join('|')}]`);
    }
    const chosen = Object.entries(recorders).filter(([name]) => only === undefined || name === only);
    await Promise.all(chosen.flatMap(([, record]) => record.map((r) => r(env.client, sim))));
  } finally {
    await worker.stop();
    await Promise.all([env.teardown(), sim.close()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
