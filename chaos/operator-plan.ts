import crypto from 'node:crypto';
import type { JobOutcome } from '../dev/simulator';
import { fnv1a, seededRandom } from '../dev/simulator/hash';

/** The size of an operator campaign; with the seed, it fixes the whole sequence of actions. */
export interface OperatorOptions {
  seed: number;
  jobs: number;
  projects: number;
  /** Jobs are first started over this many seconds. */
  startSeconds: number;
  /** A job's other actions fall within this many seconds after its start. */
  actionSeconds: number;
  /** Actions per job after its start: at least, at most. */
  actionsPerJob: [number, number];
  workerKills: number;
  serverRestarts: number;
  /** How long the operator waits for a command's answer before the job's next action (the call goes on). */
  actionTimeoutSeconds: number;
  /** After the last action, how long the oracle waits for every job's workflow to close before judging. */
  settleSeconds: number;
  /** Share of the resets made with the CLI (`job reset`); the others call resetAgentJob, which it wraps. */
  cliResetShare: number;
}

/**
 * - start: `job start` with the job's key and prompt (the first one creates the job; later ones join or re-run it);
 * - signal / update: a new follow-up (`job message`, `job message --wait`) with a new messageId;
 * - resend: an earlier messageId of the job again, with its prompt, by signal or update;
 * - cancel, terminate: the running run, if any;
 * - reset: to one of the points the project's reset offers (`pick` chooses which);
 * - reset-each: to each offered point in turn, latest first, listing the points again before each;
 * - reset-refused: to a point the project's reset does not offer, which it must refuse.
 */
export type ActionKind =
  | 'start'
  | 'signal'
  | 'update'
  | 'resend'
  | 'cancel'
  | 'terminate'
  | 'reset'
  | 'reset-each'
  | 'reset-refused';

export interface PlannedAction {
  /** Position in the plan (the order of `atMs`). */
  index: number;
  /** Milliseconds after the campaign's start. */
  atMs: number;
  job: number;
  kind: ActionKind;
  messageId?: string;
  via?: 'signal' | 'update';
  /** A draw in [0, 1) for choices that depend on what the action finds (which reset point). */
  pick: number;
  /** A reset made with the CLI rather than the client library. */
  cli: boolean;
}

export interface PlannedJob {
  index: number;
  project: number;
  outcome: JobOutcome;
  durationMs: number;
}

export interface OperatorPlan {
  seed: number;
  actionTimeoutSeconds: number;
  settleSeconds: number;
  jobs: PlannedJob[];
  actions: PlannedAction[];
  workerKillsAt: number[];
  serverRestartsAt: number[];
  /** sha256 of everything above: the same seed and options give the same digest. */
  digest: string;
}

const OUTCOMES: JobOutcome[] = ['completed', 'completed', 'failed', 'archived', 'completed-no-edits'];

/** Relative weights of the actions after a job's first start. */
const WEIGHTS: [Exclude<ActionKind, never>, number][] = [
  ['signal', 22],
  ['update', 18],
  ['resend', 16],
  ['start', 6],
  ['cancel', 6],
  ['terminate', 5],
  ['reset', 14],
  ['reset-each', 5],
  ['reset-refused', 8],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);

/** The operator's actions for `options`, the same for the same seed (mulberry32 seeded with it). */
export function planOperators(options: OperatorOptions): OperatorPlan {
  const random = seededRandom(fnv1a(`operators-${options.seed}`));
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const jobs: PlannedJob[] = Array.from({ length: options.jobs }, (_, index) => {
    const project = index % options.projects;
    return {
      index,
      project,
      outcome: OUTCOMES[project % OUTCOMES.length] ?? 'completed',
      durationMs: 3_000 + (project % 3) * 1_500,
    };
  });
  const actions: Omit<PlannedAction, 'index'>[] = [];
  for (const job of jobs) {
    const startMs = Math.floor((options.startSeconds * 1000 * job.index) / options.jobs);
    actions.push({ atMs: startMs, job: job.index, kind: 'start', pick: random(), cli: false });
    const count = between(options.actionsPerJob[0], options.actionsPerJob[1]);
    const times = Array.from(
      { length: count },
      () => startMs + 500 + Math.floor(random() * options.actionSeconds * 1000),
    );
    const messageIds: string[] = [];
    for (const atMs of times.sort((a, b) => a - b)) {
      let kind = weighted(random());
      if (kind === 'resend' && messageIds.length === 0) kind = 'signal';
      const pick = random();
      const cli = kind.startsWith('reset') && random() < options.cliResetShare;
      const via = random() < 0.5 ? ('signal' as const) : ('update' as const);
      if (kind === 'signal' || kind === 'update') {
        const messageId = `m${messageIds.length + 1}`;
        messageIds.push(messageId);
        actions.push({ atMs, job: job.index, kind, messageId, via: kind, pick, cli });
      } else if (kind === 'resend') {
        const messageId = messageIds[Math.floor(pick * messageIds.length)];
        actions.push({ atMs, job: job.index, kind, ...(messageId ? { messageId } : {}), via, pick, cli });
      } else {
        actions.push({ atMs, job: job.index, kind, pick, cli });
      }
    }
  }
  const lastMs = options.startSeconds * 1000 + options.actionSeconds * 1000;
  const disruption = () => Math.round(2 + (random() * 0.85 * lastMs) / 1000);
  const workerKillsAt = Array.from({ length: options.workerKills }, disruption).sort((a, b) => a - b);
  const serverRestartsAt = Array.from({ length: options.serverRestarts }, disruption).sort((a, b) => a - b);
  const ordered = actions
    .map((action, order) => ({ action, order }))
    .sort((a, b) => a.action.atMs - b.action.atMs || a.order - b.order)
    .map(({ action }, index) => ({ index, ...action }));
  const body = {
    seed: options.seed,
    actionTimeoutSeconds: options.actionTimeoutSeconds,
    settleSeconds: options.settleSeconds,
    jobs,
    actions: ordered,
    workerKillsAt,
    serverRestartsAt,
  };
  const digest = crypto.createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  return { ...body, digest };
}

function weighted(draw: number): ActionKind {
  let left = draw * TOTAL_WEIGHT;
  for (const [kind, weight] of WEIGHTS) {
    left -= weight;
    if (left < 0) return kind;
  }
  return 'signal';
}
