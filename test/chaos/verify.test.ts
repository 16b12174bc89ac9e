import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentJobFailureOf } from '../../src/client/agent-job';
import { AgentJobFailureType, FollowUpFailureType } from '../../src/contract/agent-job';
import { agentJobWorkflowId } from '../../src/contract/names';
import { emptyVerdict, verifyJobs } from '../../chaos/verify';
import { sendOne, type FollowUpSpec, type JobSpec } from '../../chaos/workload';
import { ActivityGate } from '../helpers/activity-gate';
import { useStack } from '../helpers/stack';
import { eventTypes, startJob, uniqueProject } from '../workflows/agent-job-harness';

const createGate = new ActivityGate();

const h = useStack({
  name: 'chaos-verify',
  simulator: { jobs: { durationMs: 2000 } },
  worker: () => ({
    wrapActivities: (activities) => ({
      ...activities,
      async createAgentJob(request) {
        await createGate.pass(request.projectId);
        return activities.createAgentJob(request);
      },
    }),
  }),
});

/** A job of the campaign's shape whose create the service processes but whose answer is lost (a reset). */
function jobWithUnknownCreate(label: string): { job: JobSpec; spec: FollowUpSpec } {
  const projectId = uniqueProject(label);
  h.sim.configureProject(projectId, { jobs: { durationMs: 2000, outcome: 'completed' } });
  h.sim.faults.add({ route: 'createJob', kind: 'reset', afterProcessing: true, times: 1, projectId });
  const spec: FollowUpSpec = { messageId: 'm1', prompt: `${label} follow-up`, via: 'update', delayMs: 0 };
  const job: JobSpec = {
    projectId,
    workflowId: agentJobWorkflowId(projectId, 'job'),
    prompt: `${label}: document the retry policy`,
    outcome: 'completed',
    followUps: [spec],
  };
  return { job, spec };
}

/**
 * A campaign job whose create fails with an unknown outcome, and its update `m1` sent while `gate` holds one of
 * the run's activities; `until` says when the update has gone far enough for the gate to open. Returns what the
 * campaign's caller saw, how the run failed, and the verifier's verdict on both.
 */
async function updateMeetingFailingRun(
  label: string,
  gate: ActivityGate,
  until: (job: JobSpec) => Promise<void>,
) {
  const { job, spec } = jobWithUnknownCreate(label);
  const held = gate.hold(job.projectId);
  job.startedAt = Date.now();
  const handle = await startJob(h.client, { projectId: job.projectId, prompt: job.prompt });
  await held.entered;
  const deadline = Date.now() + 60_000;
  const sending = sendOne(h.client, job, spec, deadline);
  await until(job);
  held.release();
  const sent = await sending;
  const failure = await handle.result().then(
    () => assert.fail('the run should fail'),
    (error: unknown) => agentJobFailureOf(error),
  );
  assert.equal(failure?.type, AgentJobFailureType.createOutcomeUnknown);
  const verdict = emptyVerdict();
  await verifyJobs(h.client, h.sim, { jobs: [job], sent: [sent], killTimes: [] }, deadline, verdict);
  return { sent, failure, verdict, events: await eventTypes(handle) };
}

const UPDATE_ACCEPTED = 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED';

describe('chaos verifier: an update meeting a run that fails (create outcome unknown)', () => {
  test('accepted while the create is in flight: answered FollowUpNotSent and listed in the failure', async () => {
    // Accepted in a workflow task of its own while the create activity is held.
    const { sent, failure, verdict, events } = await updateMeetingFailingRun(
      'verify-accepted',
      createGate,
      async (job) => {
        const handle = h.client.workflow.getHandle(job.workflowId);
        while (!(await eventTypes(handle)).includes(UPDATE_ACCEPTED)) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
    );
    assert.ok(events.includes(UPDATE_ACCEPTED));
    assert.deepEqual(
      failure?.followUps.map(({ messageId, status }) => ({ messageId, status })),
      [{ messageId: 'm1', status: 'pending' }],
    );
    assert.equal(sent.accepted, true);
    assert.equal(sent.answer, FollowUpFailureType.notSent);
    assert.deepEqual(verdict.violations, []);
    assert.deepEqual(verdict.followUps, { 'not sent: the job ended first (reported)': 1 });
  });
});
