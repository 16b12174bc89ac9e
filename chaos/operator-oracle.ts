import type { Client } from '@temporalio/client';
import { agentJobFailureOf } from '../src/client/agent-job';
import {
  AgentJobFailureType,
  FollowUpFailureType,
  type AgentJobState,
  type FollowUpRecord,
} from '../src/contract/agent-job';
import { getStateQuery } from '../src/contract/messages';
import { quoteVisibility } from '../src/contract/names';
import type { RequestLogEntry, Simulator } from '../dev/simulator';
import type { OperatorPlan } from './operator-plan';
import { followUpPrompt, type ActionRecord, type OperatorJob } from './operators';
import { closedBeforeFirstTask, retrying, sleep } from './retrying';

/** The operator campaign's figures; `counts` are the oracle's, each 0 in a run without violations. */
export interface OperatorTally {
  seed: number;
  digest: string;
  jobs: number;
  actions: Record<string, number>;
  answers: Record<string, number>;
  resets: Record<string, number>;
  endings: Record<string, number>;
  followUps: Record<string, number>;
  /** Updates a run accepted whose caller got no FollowUp answer (delivered, or a typed failure): not in counts. */
  untypedUpdateAnswers: string[];
  counts: {
    jobsCreatedTwice: number;
    messageIdsSentTwice: number;
    acceptedNeverSent: number;
    neitherEndedNorWaiting: number;
    resetsMadeToPointsNotOffered: number;
    /** MessageIds whose every send the operator was told was not taken, yet the service got one. */
    refusedYetSent: number;
  };
}

/** What an update accepted by a run answers: delivered, or why not (FollowUpFailureType). */
const TYPED_ANSWERS = new Set<string>([
  'delivered',
  FollowUpFailureType.rejected,
  FollowUpFailureType.outcomeUnknown,
  FollowUpFailureType.notSent,
]);

interface RunView {
  runId: string;
  status: string;
  failureType?: string;
  state?: AgentJobState;
  /** Why `getState` could not be read (a closed run's query replays its history on a worker). */
  unreadable?: string;
  /** Closed before its first workflow task (a reset's run stopped at once): it holds what it was reset from. */
  neverRan?: true;
}

/**
 * Judges the campaign by the simulator's request log (see docs/reliability.md, "The operator campaign"):
 * 0 jobs created twice, 0 messageIds sent twice, 0 accepted follow-ups that never reached the service without
 * one of the listed excuses, every job ended or visibly waiting, and no reset made to a point not offered.
 */
export async function verifyOperators(
  client: Client,
  sim: Simulator,
  run: {
    plan: OperatorPlan;
    jobs: OperatorJob[];
    records: ActionRecord[];
    startedAt: number;
    killTimes: number[];
  },
  deadline: number,
  violations: string[],
  log: (line: string) => void,
): Promise<OperatorTally> {
  const { plan, jobs, records, startedAt, killTimes } = run;
  const at = (ms: number) => `t+${((ms - startedAt) / 1000).toFixed(1)}s`;
  const tally: OperatorTally = {
    seed: plan.seed,
    digest: plan.digest,
    jobs: jobs.length,
    actions: {},
    answers: {},
    resets: {},
    endings: {},
    followUps: {},
    untypedUpdateAnswers: [],
    counts: {
      jobsCreatedTwice: 0,
      messageIdsSentTwice: 0,
      acceptedNeverSent: 0,
      neitherEndedNorWaiting: 0,
      resetsMadeToPointsNotOffered: 0,
      refusedYetSent: 0,
    },
  };
  for (const record of records) {
    if (record.action.via === 'update' && record.accepted === true && !TYPED_ANSWERS.has(record.outcome)) {
      tally.untypedUpdateAnswers.push(
        `${where(jobs[record.action.job])} ${record.action.messageId} (action #${record.action.index}, ${at(record.startedAt)}): ${record.outcome}: ${record.detail ?? ''}`,
      );
    }
    count(tally.actions, record.action.kind + (record.action.cli ? ' (CLI)' : ''));
    count(tally.answers, `${record.action.kind}: ${record.outcome.replace(/\d+/g, 'N')}`);
    for (const attempt of record.resets ?? []) {
      count(tally.resets, 'offered points seen', attempt.offered.length);
      count(
        tally.resets,
        `${attempt.to === undefined ? 'default' : attempt.asked} point asked via ${attempt.via}: ${attempt.done ? 'reset' : 'refused'}`,
      );
      if (attempt.refusal !== undefined) {
        count(tally.resets, `refused because ${attempt.refusal.split(';')[0]?.replace(/\d+/g, 'N')}`);
      }
      if (attempt.asked === 'not offered' && attempt.done) {
        tally.counts.resetsMadeToPointsNotOffered += 1;
        violations.push(
          `seed ${plan.seed} ${where(jobs[record.action.job])}: reset made to event ${attempt.to}, which was not offered (offered: ${attempt.offered.join(', ') || 'none'})`,
        );
      }
    }
  }

  const settleUntil = Math.min(deadline, Date.now() + plan.settleSeconds * 1000);
  let running = await runningCount(client, jobs);
  while (Date.now() < settleUntil && running > 0) {
    await sleep(2000);
    running = await runningCount(client, jobs);
  }
  log(`${at(Date.now())}: ${running} jobs still running; reading every run of every job`);
  const requests = sim.requests();
  const runsByJob = await inBatches(jobs, 10, (job) => runsOf(client, job.workflowId, deadline));
  for (const [index, job] of jobs.entries()) {
    const runs = runsByJob[index] ?? [];
    const history = jobHistory(records, job, at);
    const context = `${where(job)} [${history}]`;
    const last = runs.at(-1);
    const waiting = last?.status === 'RUNNING' ? (waitingReason(last.state) ?? 'no reason given') : undefined;
    const ending =
      last === undefined
        ? 'no workflow'
        : `${last.status}${last.failureType ? ` ${last.failureType}` : ''}${waiting ? ` (${waiting})` : ''}`;
    count(tally.endings, ending);
    if (waiting) log(`still running: ${context}: ${ending}`);
    if (last === undefined || (last.status === 'RUNNING' && waitingReason(last.state) === undefined)) {
      tally.counts.neitherEndedNorWaiting += 1;
      violations.push(`seed ${plan.seed} ${context}: ${ending}, and its state gives no reason for waiting`);
    }

    const creates = requests.filter((e) => e.route === 'createJob' && e.prompt === job.prompt && e.processed);
    if (creates.length > 1) {
      tally.counts.jobsCreatedTwice += 1;
      violations.push(
        `seed ${plan.seed} ${context}: ${creates.length} jobs created at the service (${entries(creates, at)})`,
      );
    }

    const messageIds = [
      ...new Set(
        plan.actions
          .filter((a) => a.job === job.planned.index && a.messageId)
          .map((a) => a.messageId as string),
      ),
    ];
    for (const messageId of messageIds) {
      const prompt = followUpPrompt(job, messageId);
      const sends = requests.filter((e) => e.route === 'sendMessage' && e.prompt === prompt);
      const processed = sends.filter((e) => e.processed);
      const reached = sends.filter((e) => e.processed || (e.fault === undefined && e.status === 409));
      count(tally.followUps, 'messageIds');
      if (processed.length > 1) {
        tally.counts.messageIdsSentTwice += 1;
        violations.push(
          `seed ${plan.seed} ${context}: ${messageId} sent ${processed.length} times (${entries(processed, at)})`,
        );
      }
      const accepting = records.filter(
        (r) =>
          r.action.job === job.planned.index &&
          r.action.messageId === messageId &&
          acceptedBy(r, runs, messageId, reached.length > 0),
      );
      if (accepting.length === 0) {
        count(tally.followUps, 'never accepted');
        if (reached.length > 0 && resetAfterRefusal(records, job, messageId)) {
          count(tally.followUps, 'never accepted: decided again by a reset, then sent');
        } else if (reached.length > 0) {
          tally.counts.refusedYetSent += 1;
          violations.push(
            `seed ${plan.seed} ${context}: ${messageId} never accepted, yet it reached the service (${entries(reached, at)}); runs: ${fates(runs, messageId)}`,
          );
        }
        continue;
      }
      count(tally.followUps, 'accepted');
      if (reached.length > 0) {
        count(
          tally.followUps,
          processed.length > 0 ? 'accepted: sent' : 'accepted: refused by the service (409)',
        );
        continue;
      }
      const lastAccepted = accepting.at(-1) as ActionRecord;
      const excuse = excuseOf(job, messageId, lastAccepted, records, runs, requests, killTimes, sim);
      if (excuse !== undefined) {
        count(tally.followUps, `accepted, not sent: ${excuse}`);
        continue;
      }
      tally.counts.acceptedNeverSent += 1;
      violations.push(
        `seed ${plan.seed} ${context}: ${messageId} accepted (action #${lastAccepted.action.index}) but never reached the service; runs: ${fates(runs, messageId)}`,
      );
    }
  }
  return tally;
}

/**
 * A reset made after the messageId was refused: Temporal reapplies the signals received after the reset point to
 * the reset's run, which decides them again (an id refused may be sent again: contract.md).
 */
function resetAfterRefusal(records: ActionRecord[], job: OperatorJob, messageId: string): boolean {
  const mine = records.filter((r) => r.action.job === job.planned.index);
  const refusedAt = mine.find((r) => r.action.messageId === messageId)?.startedAt;
  return (
    refusedAt !== undefined &&
    mine.some(
      (r) =>
        (r.action.kind === 'reset' || r.action.kind === 'reset-each') &&
        r.startedAt > refusedAt &&
        r.outcome.includes('point: reset'),
    )
  );
}

/**
 * Why an accepted follow-up has not reached the service, when something excuses it; undefined otherwise.
 * - stopped: a run that held it pending ended CANCELLED, or TERMINATED by the operator's terminate (not by a
 *   reset, whose new run takes the run's follow-ups over). The stop may have been asked before the follow-up
 *   was queued: a run takes follow-ups until its workflow code sees the cancellation, and a reset to a point
 *   after a cancellation request copies the request into the new run;
 * - refusing: the service job is failed or archived (takes no follow-ups) and a run settled it as rejected;
 * - create unknown: a run that held it pending failed AgentJobCreateOutcomeUnknown (its caller was answered
 *   FollowUpNotSent), with a cause: a fault on the job's create after the service acted, or a worker kill;
 * - send unknown: a run recorded it outcome_unknown, and a worker was killed after it was accepted;
 * - waiting: the job's last run still runs and says why (see waitingReason), with it pending.
 */
function excuseOf(
  job: OperatorJob,
  messageId: string,
  accepted: ActionRecord,
  records: ActionRecord[],
  runs: RunView[],
  log: readonly RequestLogEntry[],
  killTimes: number[],
  sim: Simulator,
): string | undefined {
  const pendingIn = runs.filter(
    (run, i) =>
      recordOf(run, messageId)?.status === 'pending' ||
      (run.neverRan === true && i > 0 && recordOf(runs[i - 1] as RunView, messageId)?.status === 'pending'),
  );
  const stops = records.filter((r) => r.action.job === job.planned.index && r.stoppedRun !== undefined);
  const stopped = pendingIn.some(
    (run) =>
      (run.status === 'CANCELLED' && stops.some((r) => r.action.kind === 'cancel')) ||
      (run.status === 'TERMINATED' && stops.some((r) => r.stoppedRun === run.runId)),
  );
  if (stopped) {
    const asked = stops.some((r) => r.action.index < accepted.action.index);
    return asked ? 'queued in a run already asked to stop' : 'its run was cancelled or terminated first';
  }
  const jobIds = new Set(runs.flatMap((r) => (r.state?.jobId ? [r.state.jobId] : [])));
  const refusing = [...jobIds].some((id) => ['failed', 'archived'].includes(sim.job(id)?.status ?? ''));
  if (refusing && runs.some((r) => recordOf(r, messageId)?.status === 'rejected')) {
    return 'the job ended failed or archived (takes no follow-ups)';
  }
  const createFault = log.some(
    (e) => e.route === 'createJob' && e.prompt === job.prompt && e.processed && e.status !== 201,
  );
  const createUnknown = pendingIn.some((run) => run.failureType === AgentJobFailureType.createOutcomeUnknown);
  if (createUnknown && (createFault || killTimes.length > 0)) {
    return 'its run failed first: create outcome unknown (answered FollowUpNotSent)';
  }
  const killedAfter = killTimes.some((t) => t >= accepted.startedAt);
  if (killedAfter && runs.some((r) => recordOf(r, messageId)?.status === 'outcome_unknown')) {
    return 'outcome unknown after a worker kill';
  }
  const last = runs.at(-1);
  const waiting = last?.status === 'RUNNING' ? waitingReason(last.state) : undefined;
  if (waiting !== undefined && last !== undefined && pendingIn.includes(last)) {
    return `its job still waits: ${waiting}`;
  }
  return undefined;
}

/**
 * A follow-up action counts as accepted when its answer said so; without an answer (the operator stopped
 * waiting), when the service got the messageId or a run recorded it other than as rejected (a rejected record
 * may be the workflow's refusal of a signal).
 */
function acceptedBy(record: ActionRecord, runs: RunView[], messageId: string, reached: boolean): boolean {
  if (record.accepted !== undefined) return record.accepted;
  if (reached) return true;
  return runs.some((r) => {
    const status = recordOf(r, messageId)?.status;
    return status !== undefined && status !== 'rejected';
  });
}

function recordOf(run: RunView, messageId: string): FollowUpRecord | undefined {
  return run.state?.followUps.filter((r) => r.messageId === messageId).at(-1);
}

/**
 * Why a running job waits, from its state (times left out, so that reasons tally); undefined when the state
 * gives none (or cannot be read).
 */
function waitingReason(state: AgentJobState | undefined): string | undefined {
  if (!state) return undefined;
  if (state.lastError) return state.lastError.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T').slice(0, 120);
  if (state.queuedForBudget) return 'queued for the budget';
  if (state.nextPollAt) return 'a poll is scheduled';
  if (state.pollingSince) return 'polling';
  return undefined;
}

async function runningCount(client: Client, jobs: OperatorJob[]): Promise<number> {
  const statuses = await Promise.all(
    jobs.map((job) =>
      client.workflow
        .getHandle(job.workflowId)
        .describe()
        .then((d) => d.status.name)
        .catch(() => 'RUNNING'),
    ),
  );
  return statuses.filter((s) => s === 'RUNNING').length;
}

/**
 * How long the oracle keeps asking a run for its state: a closed run's query is a workflow task that replays its
 * whole history, queued behind the campaign's other reads on a loaded worker.
 */
const QUERY_PATIENCE_MS = 120_000;

/** Every run of the workflow id, oldest first, with how it ended and its state (a query replays a closed run). */
async function runsOf(client: Client, workflowId: string, deadline: number): Promise<RunView[]> {
  const listed = await retrying(async () => {
    const found = [];
    for await (const info of client.workflow.list({ query: `WorkflowId = ${quoteVisibility(workflowId)}` })) {
      found.push(info);
    }
    return found;
  }, deadline);
  listed.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return Promise.all(
    listed.map(async (info): Promise<RunView> => {
      const handle = client.workflow.getHandle(workflowId, info.runId);
      const { status } = await retrying(() => handle.describe(), deadline);
      let unreadable: string | undefined;
      let neverRan = false;
      const state = await retrying(() => handle.query(getStateQuery), Date.now() + QUERY_PATIENCE_MS).catch(
        (error: unknown) => {
          unreadable = error instanceof Error ? error.message : String(error);
          neverRan = closedBeforeFirstTask(error);
          return undefined;
        },
      );
      const failureType =
        status.name === 'FAILED'
          ? await handle.result().then(
              () => undefined,
              (error: unknown) => agentJobFailureOf(error)?.type,
            )
          : undefined;
      return {
        runId: info.runId,
        status: status.name,
        ...(failureType ? { failureType } : {}),
        ...(state ? { state } : {}),
        ...(unreadable === undefined ? {} : { unreadable }),
        ...(neverRan ? { neverRan: true as const } : {}),
      };
    }),
  );
}

function jobHistory(records: ActionRecord[], job: OperatorJob, at: (ms: number) => string): string {
  return records
    .filter((r) => r.action.job === job.planned.index)
    .map(
      (r) =>
        `#${r.action.index} ${at(r.startedAt)} ${r.action.kind}${r.action.messageId ? ` ${r.action.messageId}` : ''}${r.action.via && r.action.kind === 'resend' ? ` by ${r.action.via}` : ''}: ${r.outcome}`,
    )
    .join('; ');
}

/** Each run of the job, oldest first: how it ended and its record of the messageId. */
function fates(runs: RunView[], messageId: string): string {
  return runs
    .map(
      (r) =>
        `${r.runId.slice(0, 8)} ${r.status}${r.failureType ? ` ${r.failureType}` : ''}: ${r.state === undefined ? `no state (${r.unreadable ?? '?'})` : (recordOf(r, messageId)?.status ?? 'no record')}`,
    )
    .join('; ');
}

function entries(log: RequestLogEntry[], at: (ms: number) => string): string {
  return log.map((e) => `seq ${e.seq} ${at(e.at)} ${e.status}`).join(', ');
}

function where(job: OperatorJob | undefined): string {
  return job ? `job ${job.planned.index} (${job.workflowId})` : 'job ?';
}

async function inBatches<T, R>(items: T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return results;
}

function count(tally: Record<string, number>, key: string, by = 1): void {
  tally[key] = (tally[key] ?? 0) + by;
}
