import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { getAgentJobState } from '../../src/client/agent-job';
import { AgentJobFailureType, FOLLOW_UP_LIMITS } from '../../src/contract/agent-job';
import { followUpSignal } from '../../src/contract/messages';
import {
  deleteCreateRecord,
  eventually,
  projectWithJobs,
  requestsOf,
  startJob,
  useAgentJobStack,
  workflowFailure,
} from '../workflows/agent-job-harness';

// What `docs-agent job …` tells an operator, checked against what the simulator received (issue 44).

const h = useAgentJobStack();
const STARTER = path.resolve(__dirname, '../../src/starter.ts');

/** `docs-agent <args>` as a user runs it: exit code and output. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', STARTER, ...args],
      {
        env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default' },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const prompt = (messageId: string) => `Follow-up ${messageId}`;

function sent(projectId: string, messageId: string): number {
  return requestsOf(h.sim, { projectId, route: 'sendMessage' }).filter((r) => r.prompt === prompt(messageId))
    .length;
}

function creates(projectId: string): number {
  return requestsOf(h.sim, { projectId, route: 'createJob' }).length;
}

async function jobOf(workflowId: string): Promise<string> {
  return eventually(async () => (await getAgentJobState(h.client, workflowId)).jobId ?? undefined, 'the job');
}

/** `job message --wait` for this messageId, to the workflow. */
const messageAndWait = (workflowId: string, messageId: string) =>
  cli(
    'job',
    'message',
    '--workflow-id',
    workflowId,
    '--prompt',
    prompt(messageId),
    '--message-id',
    messageId,
    '--wait',
  );

describe('job message --wait says why a follow-up was not delivered', () => {
  test('a duplicate exits 0 saying it was not sent again; an unknown outcome or a 4xx exits 1 with its type', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-wait-reasons', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Answers follow-ups' }, 'reasons');
    const jobId = await jobOf(handle.workflowId);

    const delivered = await messageAndWait(handle.workflowId, 'd1');
    assert.equal(delivered.code, 0, delivered.stderr);
    assert.match(delivered.stdout, new RegExp(`^delivered: job ${jobId} is active$`, 'm'));
    const again = await messageAndWait(handle.workflowId, 'd1');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^follow-up d1 was received before by \S+: delivered, not sent again$/m);
    assert.equal(sent(projectId, 'd1'), 1);

    h.sim.faults.add({
      route: 'sendMessage',
      projectId,
      kind: 'status',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const unknown = await messageAndWait(handle.workflowId, 'u1');
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stdout, /^follow-up u1: FollowUpOutcomeUnknown: follow-up u1: /m);
    const unknownAgain = await messageAndWait(handle.workflowId, 'u1');
    assert.equal(unknownAgain.code, 1, unknownAgain.stderr);
    assert.match(
      unknownAgain.stdout,
      /^follow-up u1 was received before by \S+: outcome_unknown, not sent again$/m,
    );
    assert.equal(sent(projectId, 'u1'), 1);

    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'status', status: 422, times: 1 });
    const refused = await messageAndWait(handle.workflowId, 'r1');
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stdout, /^follow-up r1: FollowUpRejected: follow-up r1: /m);

    // The text of `job status` counts each status and names the follow-ups that may have reached the service.
    const status = await cli('job', 'status', '--workflow-id', handle.workflowId);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^follow-ups: 1 delivered, 1 rejected, 1 outcome_unknown$/m);
    assert.match(status.stdout, /^outcome unknown \(may have reached the service, not sent again\): u1$/m);

    h.sim.completeJob(jobId, 'completed');
    await handle.result();
    const ended = await messageAndWait(handle.workflowId, 'e1');
    assert.equal(ended.code, 1, ended.stderr);
    assert.match(ended.stdout, /^follow-up e1: FollowUpNotAccepted: .*closed \(COMPLETED\)/m);
    assert.equal(sent(projectId, 'e1'), 0);
  });

  test('a full queue exits 1 naming the limit; nothing is sent', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-wait-full', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Busy job' }, 'full');
    await jobOf(handle.workflowId);
    // The first follow-up stays at the service for the whole test: the queue stays full.
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'latency', latencyMs: 240_000 });
    await Promise.all(
      Array.from({ length: FOLLOW_UP_LIMITS.maxPending }, (_, i) =>
        handle.signal(followUpSignal, { prompt: prompt(`q${i}`), messageId: `q${i}` }),
      ),
    );
    const full = await messageAndWait(handle.workflowId, 'over');
    assert.equal(full.code, 1, full.stderr);
    assert.match(
      full.stdout,
      new RegExp(
        `^follow-up over: FollowUpNotAccepted: ${FOLLOW_UP_LIMITS.maxPending} follow-ups are already waiting`,
        'm',
      ),
    );
    assert.equal(sent(projectId, 'over'), 0);
    await handle.terminate();
  });
});

describe('job message: a follow-up refused earlier is sent under its id once the reason is gone', () => {
  test('queue full, then drained: the same messageId is queued and reaches the service once', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-resend', 600_000);
    const handle = await startJob(h.client, { projectId, prompt: 'Busy, then not' }, 'resend');
    await jobOf(handle.workflowId);
    h.sim.faults.add({ route: 'sendMessage', projectId, kind: 'latency', latencyMs: 8000, times: 1 });
    await Promise.all(
      Array.from({ length: FOLLOW_UP_LIMITS.maxPending }, (_, i) =>
        handle.signal(followUpSignal, { prompt: prompt(`q${i}`), messageId: `q${i}` }),
      ),
    );
    const args = [
      'job',
      'message',
      '--workflow-id',
      handle.workflowId,
      '--prompt',
      prompt('later'),
      '--message-id',
      'later',
    ];
    const refused = await cli(...args);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stdout, /^follow-up later not queued: 20 follow-ups are already waiting/m);
    await eventually(
      async () => (await getAgentJobState(h.client, handle.workflowId)).pendingFollowUps === 0,
      'the queue drained',
      60_000,
    );

    const resent = await cli(...args);
    assert.equal(resent.code, 0, resent.stdout);
    assert.doesNotMatch(resent.stdout, /not queued/);
    await eventually(() => sent(projectId, 'later') === 1, 'the follow-up at the service');
    await handle.terminate();
  });
});

describe('job status after a failure: what exists at the service', () => {
  test('AgentJobCreateOutcomeUnknown without its create record: a job may exist, and no reset creates another', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-create-500', 600_000);
    h.sim.faults.add({
      route: 'createJob',
      projectId,
      kind: 'status',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const handle = await startJob(h.client, { projectId, prompt: 'Created, answered 500' }, 'unknown');
    assert.equal((await workflowFailure(handle.result())).type, AgentJobFailureType.createOutcomeUnknown);
    // As when Temporal was down while the record was written: the history alone must decide.
    const deleteRecord = () => deleteCreateRecord(h.client, handle.workflowId);
    await deleteRecord();

    const status = await cli('job', 'status', '--workflow-id', handle.workflowId);
    assert.equal(status.code, 1, status.stderr);
    assert.match(status.stdout, /^FAILED: /);
    assert.match(status.stdout, /a job may exist at the service/);
    assert.doesNotMatch(status.stdout, /before a service job was created/);

    const listed = await cli('job', 'reset', '--workflow-id', handle.workflowId, '--list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const points = JSON.parse(listed.stdout) as { runId: string; safe: number[]; calls: { type: string }[] };
    assert.equal(points.runId, (await handle.describe()).runId, 'nothing was reset');
    assert.ok(points.safe.length > 0, listed.stdout);
    assert.deepEqual(
      points.calls.map((call) => call.type),
      ['createAgentJob'],
    );

    const events = (await handle.fetchHistory()).events ?? [];
    const firstTask = Number(events.find((event) => event.workflowTaskCompletedEventAttributes)?.eventId);
    const early = await cli('job', 'reset', '--workflow-id', handle.workflowId, '--to', String(firstTask));
    assert.equal(early.code, 1, early.stderr);
    assert.match(
      early.stdout,
      new RegExp(
        `^reset refused: event ${firstTask} precedes the create closed at event \\d+: the service may have created a job`,
        'm',
      ),
    );
    const latest = await cli('job', 'reset', '--workflow-id', handle.workflowId);
    assert.equal(latest.code, 0, latest.stderr);
    const again = await workflowFailure(h.client.workflow.getHandle(handle.workflowId).result());
    assert.equal(again.type, AgentJobFailureType.createOutcomeUnknown);

    // A new start under the key, the record gone again: the earlier runs' histories hold the key.
    await deleteRecord();
    const restarted = await startJob(h.client, { projectId, prompt: 'Created, answered 500' }, 'unknown');
    const refused = await workflowFailure(restarted.result());
    assert.equal(refused.type, AgentJobFailureType.keyInUse);
    assert.match(refused.message, /sent a create whose outcome is unknown/);
    assert.equal(creates(projectId), 1, 'one create in all');
  });

  test('AgentJobNotFound: no advice to continue a job the service does not know', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-not-found', 600_000);
    h.sim.faults.add({ route: 'getJob', projectId, kind: 'status', status: 404 });
    const handle = await startJob(h.client, { projectId, prompt: 'Lost at the service' }, 'lost');
    assert.equal((await workflowFailure(handle.result())).type, AgentJobFailureType.jobNotFound);
    const status = await cli('job', 'status', '--workflow-id', handle.workflowId);
    assert.equal(status.code, 1, status.stderr);
    assert.match(status.stdout, /^Job \S+ is not_found: it takes no follow-ups; start a new job$/m);
    assert.doesNotMatch(status.stdout, /job message/);
  });

  test('AgentJobCreateRejected: no service job was created', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-create-422', 600_000);
    h.sim.faults.add({ route: 'createJob', projectId, kind: 'status', status: 422, times: 1 });
    const handle = await startJob(h.client, { projectId, prompt: 'Refused' }, 'refused');
    assert.equal((await workflowFailure(handle.result())).type, AgentJobFailureType.createRejected);
    const status = await cli('job', 'status', '--workflow-id', handle.workflowId);
    assert.equal(status.code, 1, status.stderr);
    assert.match(
      status.stdout,
      /^Workflow \S+ closed \(FAILED\) before a service job was created: there is no job/m,
    );
    assert.equal(h.sim.stats().jobsCreatedByProject[projectId] ?? 0, 0);
  });
});

describe('job list', () => {
  test('--status takes any status the worker writes, e.g. one the interface does not list', async () => {
    const projectId = projectWithJobs(h.sim, 'cli-list-status', 600_000);
    h.sim.faults.add({ route: '*', projectId, kind: 'drift', drift: 'unknown-status' });
    const handle = await startJob(h.client, { projectId, prompt: 'Paused at the service' }, 'paused');
    await eventually(
      async () => (await getAgentJobState(h.client, handle.workflowId)).status === 'paused_for_review',
      'the unlisted status',
    );
    const listed = await eventually(async () => {
      const run = await cli('job', 'list', '--project', projectId, '--status', 'paused_for_review');
      assert.equal(run.code, 0, run.stderr);
      return run.stdout.includes(handle.workflowId) ? run.stdout : undefined;
    }, 'the job listed');
    assert.match(listed, new RegExp(`^${handle.workflowId}\\s+RUNNING\\s+paused_for_review\\s`, 'm'));
    await handle.terminate();
  });
});
