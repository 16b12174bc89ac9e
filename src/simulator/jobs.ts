import type { JobBehaviour, SimJobSnapshot } from './types';

interface JobRecord {
  id: string;
  projectId: string;
  prompt: string;
  createdAt: number;
  behaviour: JobBehaviour;
  /** Until when the job is active; after it, `outcome` applies. */
  activeUntil: number;
  /** Set by completeJob: the terminal transition happened now, with this outcome. */
  forced?: { outcome: JobBehaviour['outcome']; at: number };
  prNumber: number;
  messages: { prompt: string; at: number }[];
}

export interface JobView {
  id: string;
  status: string;
  source: { repository: string; ref: string };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
}

/** Agent jobs with a lazily evaluated state machine: the status is derived from the clock on every read. */
export class JobStore {
  readonly #jobs = new Map<string, JobRecord>();
  #sequence = 0;
  #prNumbers = 0;

  constructor(private readonly clock: () => number) {}

  create(projectId: string, prompt: string, behaviour: JobBehaviour): JobRecord {
    const now = this.clock();
    const id = `job_${(++this.#sequence).toString(36).padStart(6, '0')}${(now % 1679616).toString(36)}`;
    const job: JobRecord = {
      id,
      projectId,
      prompt,
      createdAt: now,
      behaviour,
      activeUntil: now + behaviour.durationMs,
      prNumber: ++this.#prNumbers,
      messages: [],
    };
    this.#jobs.set(id, job);
    return job;
  }

  find(projectId: string, id: string): JobRecord | undefined {
    const job = this.#jobs.get(id);
    return job && job.projectId === projectId ? job : undefined;
  }

  get(id: string): JobRecord | undefined {
    return this.#jobs.get(id);
  }

  /** Records a message: an active job stays active longer; a completed job becomes active again. */
  addMessage(job: JobRecord, prompt: string): void {
    const now = this.clock();
    job.messages.push({ prompt, at: now });
    delete job.forced;
    job.activeUntil = now + job.behaviour.durationMs;
    job.prNumber = job.prNumber || ++this.#prNumbers;
  }

  complete(id: string, outcome?: JobBehaviour['outcome']): void {
    const job = this.#jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    job.forced = { outcome: outcome ?? job.behaviour.outcome, at: this.clock() };
  }

  status(job: JobRecord): { status: string; archivedAt: number | null; prLink: string | null } {
    const now = this.clock();
    const endedAt = job.forced?.at ?? job.activeUntil;
    if (!job.forced && now < job.activeUntil) return { status: 'active', archivedAt: null, prLink: null };
    const outcome = job.forced?.outcome ?? job.behaviour.outcome;
    const prLink = `https://github.com/sim-org/${job.projectId}-docs/pull/${job.prNumber}`;
    switch (outcome) {
      case 'completed':
        return { status: 'completed', archivedAt: null, prLink };
      case 'completed-no-edits':
        return { status: 'completed', archivedAt: null, prLink: null };
      case 'failed':
        return { status: 'failed', archivedAt: null, prLink: null };
      case 'archived': {
        const archivedAt = endedAt + (job.forced ? 0 : job.behaviour.archiveAfterMs);
        return now < archivedAt
          ? { status: 'completed', archivedAt: null, prLink }
          : { status: 'archived', archivedAt, prLink };
      }
    }
  }

  view(job: JobRecord): JobView {
    const { status, archivedAt, prLink } = this.status(job);
    return {
      id: job.id,
      status,
      source: { repository: `sim-org/${job.projectId}-docs`, ref: 'main' },
      model: 'sim-agent-1',
      prLink,
      createdAt: new Date(job.createdAt).toISOString(),
      archivedAt: archivedAt === null ? null : new Date(archivedAt).toISOString(),
    };
  }

  snapshot(id: string): SimJobSnapshot | undefined {
    const job = this.#jobs.get(id);
    if (!job) return undefined;
    const view = this.view(job);
    return {
      id: job.id,
      projectId: job.projectId,
      status: view.status,
      prLink: view.prLink,
      createdAt: view.createdAt,
      archivedAt: view.archivedAt,
      prompt: job.prompt,
      messages: job.messages.map((m) => ({ ...m })),
    };
  }

  clear(): void {
    this.#jobs.clear();
  }
}
