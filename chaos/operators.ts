import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  followUpAnyState,
  sendFollowUpAndWait,
  startAgentJob,
  type FollowUpAnyStateOptions,
} from '../src/client/agent-job';
import { followUpFailureOf } from '../src/client/agent-job';
import { AgentJobResetRefusedError, resetAgentJob, resetPointsOf } from '../src/client/agent-job-runs';
import { FollowUpFailureType, type FollowUpStatus, type PollingOptions } from '../src/contract/agent-job';
import { getStateQuery } from '../src/contract/messages';
import { agentJobWorkflowId } from '../src/contract/names';
import type { Simulator } from '../dev/simulator';
import type { OperatorPlan, PlannedAction, PlannedJob } from './operator-plan';
import { retrying, sleep } from './retrying';
import { starter } from './starter-cli';

export interface OperatorJob {
  planned: PlannedJob;
  projectId: string;
  key: string;
  workflowId: string;
  prompt: string;
}

/** One reset the operator asked for: the points offered when it asked, the point, and the answer. */
export interface ResetAttempt {
  offered: number[];
  /** The event id asked for; undefined: the CLI's default (the latest offered point). */
  to: number | undefined;
  asked: 'offered' | 'not offered';
  via: 'cli' | 'client';
  /** The reset was made (new run), or the refusal's reason. */
  done: boolean;
  refusal?: string;
}

/** What the operator saw of one planned action. */
export interface ActionRecord {
  action: PlannedAction;
  startedAt: number;
  endedAt: number;
  /** The answer, as a category for the tally (e.g. "queued", "delivered", "received before: delivered"). */
  outcome: string;
  detail?: string;
  /** Follow-ups: the workflow took it (queued, delivered, or its answer is its fate); undefined when not known. */
  accepted?: boolean;
  /** Cancel or terminate: the running run asked to stop. */
  stoppedRun?: string;
  resets?: ResetAttempt[];
}

const POLLING = {
  initialInterval: '1s',
  maxInterval: '3s',
  deadline: '20m',
} as const satisfies PollingOptions;
/** How long a signal's receipt is looked for in the run's state, as `job message` does. */
const RECEIPT_WAIT_MS = 10_000;

export function operatorJobs(plan: OperatorPlan, run: string, sim: Simulator): OperatorJob[] {
  for (const job of plan.jobs) {
    sim.configureProject(projectIdOf(run, job.project), {
      jobs: {
        durationMs: job.durationMs,
        outcome: job.outcome,
        ...(job.outcome === 'archived' ? { archiveAfterMs: 0 } : {}),
      },
    });
  }
  return plan.jobs.map((planned) => {
    const projectId = projectIdOf(run, planned.project);
    const key = `job-${planned.index}`;
    return {
      planned,
      projectId,
      key,
      workflowId: agentJobWorkflowId(projectId, key),
      prompt: `Operator campaign ${run}, seed ${plan.seed}, job ${planned.index}: document the retry policy`,
    };
  });
}

const projectIdOf = (run: string, project: number) => `ops-${run}-p${project}`;

/** The prompt of a job's follow-up: one per messageId, so the request log tells each messageId's sends apart. */
export const followUpPrompt = (job: OperatorJob, messageId: string) =>
  `${job.prompt}; follow-up ${messageId}`;

/**
 * Runs the plan: each action at its time after `startedAt`, one at a time per job (an operator waits for a
 * command's answer before the next on the same job), jobs side by side.
 */
export async function runOperators(
  client: Client,
  address: () => string,
  plan: OperatorPlan,
  jobs: OperatorJob[],
  startedAt: number,
  deadline: number,
): Promise<ActionRecord[]> {
  const records: ActionRecord[] = [];
  const chains = new Map<number, Promise<void>>();
  for (const action of plan.actions) {
    const job = jobs[action.job] as OperatorJob;
    const previous = chains.get(action.job) ?? Promise.resolve();
    chains.set(
      action.job,
      previous.then(async () => {
        await sleep(Math.max(0, startedAt + action.atMs - Date.now()));
        const began = Date.now();
        const until = Math.min(deadline, began + plan.actionTimeoutSeconds * 1000);
        const seen = await withTimeout(
          act({ client, address, job, deadline: until }, action),
          plan.actionTimeoutSeconds * 1000,
        );
        records.push({ action, startedAt: began, endedAt: Date.now(), ...seen });
      }),
    );
  }
  await Promise.all(chains.values());
  return records.sort((a, b) => a.action.index - b.action.index);
}

interface ActionContext {
  client: Client;
  address: () => string;
  job: OperatorJob;
  deadline: number;
}

type Seen = Omit<ActionRecord, 'action' | 'startedAt' | 'endedAt'>;

async function act(ctx: ActionContext, action: PlannedAction): Promise<Seen> {
  try {
    switch (action.kind) {
      case 'start':
        return await start(ctx);
      case 'signal':
      case 'update':
      case 'resend':
        return action.via === 'update' ? await update(ctx, action) : await signal(ctx, action);
      case 'cancel':
      case 'terminate':
        return await stop(ctx, action.kind);
      case 'reset':
        return await resetOffered(ctx, action);
      case 'reset-each':
        return await resetEach(ctx, action);
      case 'reset-refused':
        return await resetNotOffered(ctx, action);
    }
  } catch (error) {
    return { outcome: `error: ${errorName(error)}`, detail: String(error) };
  }
}

async function start({ client, job, deadline }: ActionContext): Promise<Seen> {
  const before = await client.workflow
    .getHandle(job.workflowId)
    .describe()
    .then((d) => d.status.name)
    .catch(() => 'none');
  await retrying(
    () =>
      startAgentJob(
        client,
        { projectId: job.projectId, prompt: job.prompt, polling: POLLING },
        { key: job.key },
      ),
    deadline,
  );
  return {
    outcome: before === 'none' ? 'started' : before === 'RUNNING' ? 'joined' : `new run after ${before}`,
  };
}

/** `job message` without --wait: signals the running run, or continues a closed job in a new run. */
async function signal({ client, job, deadline }: ActionContext, action: PlannedAction): Promise<Seen> {
  const messageId = action.messageId ?? 'm0';
  const request = { prompt: followUpPrompt(job, messageId), messageId };
  const options: FollowUpAnyStateOptions = { polling: POLLING };
  let delivery;
  try {
    delivery = await retrying(() => followUpAnyState(client, job.workflowId, request, options), deadline);
  } catch (error) {
    const failure = followUpFailureOf(error);
    if (!failure) throw error;
    return { outcome: `not accepted: ${failure.type}`, detail: failure.message, accepted: false };
  }
  if (delivery.earlierStatus !== undefined) {
    return { outcome: `received before: ${delivery.earlierStatus}`, accepted: true };
  }
  const status = await receipt(client, job.workflowId, delivery.runId, messageId);
  const run = delivery.startedNewRun ? ' (new run)' : '';
  if (status === undefined) return { outcome: `signalled, no receipt${run}` };
  return { outcome: `${status}${run}`, accepted: status !== 'rejected' };
}

/** The run's record of the follow-up, once the workflow has seen the signal (as `job message` reads it). */
async function receipt(
  client: Client,
  workflowId: string,
  runId: string,
  messageId: string,
): Promise<FollowUpStatus | undefined> {
  const until = Date.now() + RECEIPT_WAIT_MS;
  while (Date.now() < until) {
    const state = await client.workflow
      .getHandle(workflowId, runId)
      .query(getStateQuery)
      .catch(() => undefined);
    const record = state?.followUps.filter((r) => r.messageId === messageId).at(-1);
    if (record) return record.status;
    await sleep(250);
  }
  return undefined;
}

/** `job message --wait`: an update, whose answer is the follow-up's fate. */
async function update({ client, job, deadline }: ActionContext, action: PlannedAction): Promise<Seen> {
  const messageId = action.messageId ?? 'm0';
  const request = { prompt: followUpPrompt(job, messageId), messageId };
  // One update id per command: retries of this command across a server restart are one update.
  const updateId = `${messageId}.a${action.index}`;
  try {
    await retrying(() => sendFollowUpAndWait(client, job.workflowId, request, { updateId }), deadline);
    return { outcome: 'delivered', accepted: true };
  } catch (error) {
    const failure = followUpFailureOf(error);
    if (!failure) return { outcome: `no answer: ${errorName(error)}`, detail: String(error) };
    const refused =
      failure.type === FollowUpFailureType.notAccepted || failure.type === FollowUpFailureType.invalidInput;
    return { outcome: failure.type, detail: failure.message, accepted: !refused };
  }
}

async function stop({ client, job, deadline }: ActionContext, kind: 'cancel' | 'terminate'): Promise<Seen> {
  const handle = client.workflow.getHandle(job.workflowId);
  const { status, runId } = await retrying(() => handle.describe(), deadline);
  if (status.name !== 'RUNNING') return { outcome: `already closed (${status.name})` };
  const running = client.workflow.getHandle(job.workflowId, runId);
  try {
    await retrying(
      () => (kind === 'cancel' ? running.cancel() : running.terminate('operator campaign')),
      deadline,
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { outcome: 'closed meanwhile' };
    throw error;
  }
  return { outcome: kind === 'cancel' ? 'cancel requested' : 'terminated', stoppedRun: runId };
}

/** The points the project's reset offers for the job's current run now (what `job reset` lists). */
async function offeredPoints({
  client,
  job,
  deadline,
}: ActionContext): Promise<{ safe: number[]; taskIds: number[] }> {
  return retrying(async () => {
    const { runId } = await client.workflow.getHandle(job.workflowId).describe();
    const { events } = await client.workflow.getHandle(job.workflowId, runId).fetchHistory();
    const safe = resetPointsOf(events ?? []).safe;
    const taskIds = (events ?? [])
      .filter((event) => event.workflowTaskCompletedEventAttributes)
      .map((event) => Number(event.eventId ?? 0));
    return { safe, taskIds };
  }, deadline);
}

async function resetOffered(ctx: ActionContext, action: PlannedAction): Promise<Seen> {
  const { safe } = await offeredPoints(ctx);
  const to = safe.length === 0 ? undefined : safe[Math.floor(action.pick * safe.length)];
  const attempt = await resetTo(ctx, safe, to, 'offered', action.cli);
  return { outcome: resetOutcome(attempt), resets: [attempt] };
}

/** To each point offered, latest first, listing again before each (a reset makes a new run with new points). */
async function resetEach(ctx: ActionContext, action: PlannedAction): Promise<Seen> {
  const first = await offeredPoints(ctx);
  const resets: ResetAttempt[] = [];
  for (const to of [...first.safe].reverse()) {
    const { safe } = await offeredPoints(ctx);
    const attempt = await resetTo(ctx, safe, to, safe.includes(to) ? 'offered' : 'not offered', action.cli);
    resets.push(attempt);
    if (!attempt.done) break;
  }
  if (resets.length === 0) resets.push(await resetTo(ctx, first.safe, undefined, 'offered', action.cli));
  return { outcome: resets.map(resetOutcome).join(', '), resets };
}

/** To a workflow task the reset does not offer (one before the last create or message), or else to event 1. */
async function resetNotOffered(ctx: ActionContext, action: PlannedAction): Promise<Seen> {
  const { safe, taskIds } = await offeredPoints(ctx);
  const unsafe = taskIds.filter((id) => !safe.includes(id));
  const to = unsafe.length === 0 ? 1 : (unsafe[Math.floor(action.pick * unsafe.length)] ?? 1);
  const attempt = await resetTo(ctx, safe, to, 'not offered', action.cli);
  return { outcome: resetOutcome(attempt), resets: [attempt] };
}

function resetOutcome(attempt: ResetAttempt): string {
  const asked = attempt.to === undefined ? 'default point' : `${attempt.asked} point`;
  return `${asked}: ${attempt.done ? 'reset' : 'refused'}`;
}

async function resetTo(
  { client, address, job, deadline }: ActionContext,
  offered: number[],
  to: number | undefined,
  asked: ResetAttempt['asked'],
  cli: boolean,
): Promise<ResetAttempt> {
  const base = { offered, to, asked, via: cli ? ('cli' as const) : ('client' as const) };
  if (cli) {
    const args = [
      'job',
      'reset',
      '--json',
      '--workflow-id',
      job.workflowId,
      ...(to === undefined ? [] : ['--to', String(to)]),
    ];
    const run = await retrying(async () => {
      const answer = await starter(address(), args);
      if (answer.code !== 0 && !answer.stdout.includes('"refused"'))
        throw new Error(answer.stderr || answer.stdout);
      return answer;
    }, deadline);
    const printed = JSON.parse(run.stdout) as { refused?: string };
    if (run.code === 0) return { ...base, done: true };
    return { ...base, done: false, refusal: printed.refused ?? run.stdout };
  }
  try {
    await retrying(
      () =>
        resetAgentJob(client, job.workflowId, {
          ...(to === undefined ? {} : { toEventId: to }),
          reason: 'operator campaign',
        }),
      deadline,
    );
    return { ...base, done: true };
  } catch (error) {
    if (!(error instanceof AgentJobResetRefusedError)) throw error;
    return { ...base, done: false, refusal: error.message };
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

async function withTimeout(seen: Promise<Seen>, ms: number): Promise<Seen> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Seen>((resolve) => {
    timer = setTimeout(() => resolve({ outcome: `no answer in ${ms / 1000} s` }), ms);
  });
  try {
    return await Promise.race([seen, late]);
  } finally {
    clearTimeout(timer);
  }
}
