import { randomBytes } from 'node:crypto';
import type { JobOutcome, JobStatus, SimJobSnapshot } from './types';

export const SOURCE_ORG = 'sim-org';
export const MODEL = 'sim-agent-1';

/** A job behaviour with the given fields over `base`; a field given as undefined keeps `base`'s value. */
export function withBehaviour(
  base: ResolvedBehaviour,
  patch: { [K in keyof ResolvedBehaviour]?: ResolvedBehaviour[K] | undefined } | undefined,
): ResolvedBehaviour {
  return {
    durationMs: patch?.durationMs ?? base.durationMs,
    outcome: patch?.outcome ?? base.outcome,
    archiveAfterMs: patch?.archiveAfterMs ?? base.archiveAfterMs,
  };
}

export interface ResolvedBehaviour {
  durationMs: number;
  outcome: JobOutcome;
  archiveAfterMs: number;
}

export interface Job {
  readonly id: string;
  readonly projectId: string;
  readonly prompt: string;
  readonly createdAt: number;
  /** Captured at creation: configuring the project later does not change running jobs. */
  readonly behaviour: ResolvedBehaviour;
  /** Until when the job is active; after it, the outcome applies. */
  activeUntil: number;
  /** Set by completeJob: the terminal transition happened at `at`, with this outcome. */
  forced?: { outcome: JobOutcome; at: number };
  /** Each repository numbers its pull requests; a follow-up pushes to the same one. */
  readonly prNumber: number;
  readonly messages: { prompt: string; at: number }[];
}

export interface JobState {
  status: JobStatus;
  prLink: string | null;
  archivedAt: number | null;
}

/** The job object of the interface (section 2.1). */
export interface JobBody {
  id: string;
  status: JobStatus;
  source: { repository: string; ref: string };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
}

/** Agent jobs whose status is derived from the clock on every read, so no timers run. */
export class JobStore {
  readonly #jobs = new Map<string, Job>();
  readonly #prNumbers = new Map<string, number>();

  constructor(private readonly clock: () => number) {}

  create(projectId: string, prompt: string, behaviour: ResolvedBehaviour): Job {
    const now = this.clock();
    const prNumber = (this.#prNumbers.get(projectId) ?? 0) + 1;
    this.#prNumbers.set(projectId, prNumber);
    const job: Job = {
      id: `job_${randomBytes(8).toString('hex')}`,
      projectId,
      prompt,
      createdAt: now,
      behaviour,
      activeUntil: now + behaviour.durationMs,
      prNumber,
      messages: [],
    };
    this.#jobs.set(job.id, job);
    return job;
  }

  /** The job, if it exists in this project. */
  find(projectId: string, id: string): Job | undefined {
    const job = this.#jobs.get(id);
    return job?.projectId === projectId ? job : undefined;
  }

  /** Records a message: the job is active for another full duration, whether it was active or completed. */
  addMessage(job: Job, prompt: string): void {
    const now = this.clock();
    job.messages.push({ prompt, at: now });
    delete job.forced;
    job.activeUntil = now + job.behaviour.durationMs;
  }

  /** Forces the terminal transition now; false for an unknown job. */
  complete(id: string, outcome?: JobOutcome): boolean {
    const job = this.#jobs.get(id);
    if (!job) return false;
    job.forced = { outcome: outcome ?? job.behaviour.outcome, at: this.clock() };
    return true;
  }

  state(job: Job): JobState {
    const now = this.clock();
    if (!job.forced && now < job.activeUntil) return { status: 'active', prLink: null, archivedAt: null };
    const outcome = job.forced?.outcome ?? job.behaviour.outcome;
    const endedAt = job.forced?.at ?? job.activeUntil;
    const prLink = `${repository(job.projectId)}/pull/${job.prNumber}`;
    switch (outcome) {
      case 'completed':
        return { status: 'completed', prLink, archivedAt: null };
      case 'completed-no-edits':
        return { status: 'completed', prLink: null, archivedAt: null };
      case 'failed':
        return { status: 'failed', prLink: null, archivedAt: null };
      case 'archived': {
        const archivedAt = job.forced ? endedAt : endedAt + job.behaviour.archiveAfterMs;
        return now < archivedAt
          ? { status: 'completed', prLink, archivedAt: null }
          : { status: 'archived', prLink, archivedAt };
      }
    }
  }

  body(job: Job): JobBody {
    const { status, prLink, archivedAt } = this.state(job);
    return {
      id: job.id,
      status,
      source: { repository: repository(job.projectId), ref: 'main' },
      model: MODEL,
      prLink,
      createdAt: new Date(job.createdAt).toISOString(),
      archivedAt: archivedAt === null ? null : new Date(archivedAt).toISOString(),
    };
  }

  snapshot(id: string): SimJobSnapshot | undefined {
    const job = this.#jobs.get(id);
    if (!job) return undefined;
    const body = this.body(job);
    return {
      id: job.id,
      projectId: job.projectId,
      status: body.status,
      prLink: body.prLink,
      createdAt: body.createdAt,
      archivedAt: body.archivedAt,
      prompt: job.prompt,
      messages: job.messages.map((m) => ({ ...m })),
    };
  }

  clear(): void {
    this.#jobs.clear();
    this.#prNumbers.clear();
  }
}

/** The repository's URL, as the service gives it in `source.repository`. */
function repository(projectId: string): string {
  return `https://github.com/${SOURCE_ORG}/${projectId}-docs`;
}
