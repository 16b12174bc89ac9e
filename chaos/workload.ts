import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { sendFollowUp, sendFollowUpAndWait, startAgentJob } from '../src/client/agent-job';
import { followUpFailureOf } from '../src/client/agent-job';
import { startVisitorsExport } from '../src/client/visitors-export';
import { FollowUpFailureType, type PollingOptions } from '../src/contract/agent-job';
import { agentJobWorkflowId, visitorsExportWorkflowId } from '../src/contract/names';
import type { ExportFormat } from '../src/contract/visitors-export';
import type { JobOutcome, Simulator } from '../dev/simulator';
import type { CampaignOptions } from './options';
import { retrying, sleep } from './retrying';

export interface FollowUpSpec {
  messageId: string;
  prompt: string;
  via: 'signal' | 'update';
  /** After the job's workflow started. */
  delayMs: number;
}

export interface JobSpec {
  projectId: string;
  workflowId: string;
  prompt: string;
  outcome: JobOutcome;
  followUps: FollowUpSpec[];
  /** When the campaign first asked Temporal to start it. */
  startedAt?: number;
}

export interface ExportSpec {
  projectId: string;
  workflowId: string;
  dateFrom: string;
  dateTo: string;
  rows: number;
  format: ExportFormat;
}

/** What the campaign's callers saw when they sent a follow-up. */
export interface SentFollowUp {
  job: JobSpec;
  spec: FollowUpSpec;
  /** When the caller first tried to send it. */
  sentAt: number;
  /** The workflow took it, as its caller learns from the answer's type (signal recorded, update accepted). */
  accepted: boolean;
  /** For updates: the workflow's answer (delivered, or the failure's message). */
  updateOutcome?: string;
  /** For updates: 'delivered', the update failure's type (FollowUp...), or the class of any other error. */
  answer?: string;
}

const OUTCOMES: JobOutcome[] = ['completed', 'completed', 'failed', 'archived', 'completed-no-edits'];
const FORMATS: ExportFormat[] = ['csv', 'ndjson', 'json'];
const CAMPAIGN_POLLING = {
  initialInterval: '1s',
  maxInterval: '4s',
  backoffCoefficient: 1.5,
  deadline: '20m',
} as const satisfies PollingOptions;

export function planJobs(options: CampaignOptions, run: string, sim: Simulator): JobSpec[] {
  const jobs: JobSpec[] = [];
  for (let p = 0; p < options.jobProjects; p += 1) {
    const projectId = `chaos-${run}-p${p}`;
    const outcome = OUTCOMES[p % OUTCOMES.length] ?? 'completed';
    sim.configureProject(projectId, {
      jobs: {
        durationMs: 6_000 + (p % 4) * 3_000,
        outcome,
        ...(outcome === 'archived' ? { archiveAfterMs: 0 } : {}),
      },
    });
    for (let j = 0; j < options.jobsPerProject; j += 1) {
      const key = `job-${j}`;
      jobs.push({
        projectId,
        workflowId: agentJobWorkflowId(projectId, key),
        prompt: `Campaign ${run} project ${p} job ${j}: document the retry policy`,
        outcome,
        followUps: Array.from({ length: options.followUpsPerJob }, (_, f) => ({
          messageId: `m${f}`,
          prompt: `Campaign ${run} project ${p} job ${j} follow-up ${f}`,
          via: f % 2 === 0 ? 'signal' : 'update',
          delayMs: 1_000 + ((j * 7 + f * 3) % 4) * 700,
        })),
      });
    }
  }
  return jobs;
}

export function planExports(options: CampaignOptions, run: string, sim: Simulator): ExportSpec[] {
  return Array.from({ length: options.exports }, (_, i) => {
    const projectId = `chaos-${run}-e${i}`;
    const rows = Math.round((options.maxExportRows * (i + 1)) / options.exports);
    sim.configureProject(projectId, { visitorPaths: rows });
    const dateFrom = '2026-11-01';
    const dateTo = '2026-11-02';
    return {
      projectId,
      workflowId: visitorsExportWorkflowId(projectId, dateFrom, dateTo),
      dateFrom,
      dateTo,
      rows,
      format: FORMATS[i % FORMATS.length] ?? 'csv',
    };
  });
}

/** Starts every job (a few at a time) and, once each has started, sends its follow-ups at their delays. */
export async function runJobs(client: Client, jobs: JobSpec[], deadline: number): Promise<SentFollowUp[]> {
  const sent: SentFollowUp[] = [];
  const followUps: Promise<void>[] = [];
  await inBatches(jobs, 20, async (job) => {
    job.startedAt = Date.now();
    await retrying(
      () =>
        startAgentJob(
          client,
          { projectId: job.projectId, prompt: job.prompt, polling: CAMPAIGN_POLLING },
          { key: job.workflowId.split('/').pop() ?? 'job' },
        ),
      deadline,
    );
    for (const spec of job.followUps) {
      followUps.push(
        sleep(spec.delayMs).then(async () => {
          sent.push(await sendOne(client, job, spec, deadline));
        }),
      );
    }
  });
  await Promise.all(followUps);
  return sent;
}

export async function sendOne(
  client: Client,
  job: JobSpec,
  spec: FollowUpSpec,
  deadline: number,
): Promise<SentFollowUp> {
  const request = { prompt: spec.prompt, messageId: spec.messageId };
  const sentAt = Date.now();
  try {
    if (spec.via === 'signal') {
      await retrying(() => sendFollowUp(client, job.workflowId, request), deadline);
      return { job, spec, sentAt, accepted: true };
    }
    await retrying(
      () => sendFollowUpAndWait(client, job.workflowId, request, { updateId: spec.messageId }),
      deadline,
    );
    return { job, spec, sentAt, accepted: true, updateOutcome: 'delivered', answer: 'delivered' };
  } catch (error) {
    const message = error instanceof Error ? `${error.message} ${causeOf(error)}` : String(error);
    if (spec.via === 'signal') return { job, spec, sentAt, accepted: false, updateOutcome: message };
    const answer = answerOf(error);
    return { job, spec, sentAt, accepted: answer !== NOT_TAKEN, updateOutcome: message, answer };
  }
}

const NOT_TAKEN = 'not taken';

/**
 * What an update's caller learns from the type of the error, never from its wording. Not taken
 * (FollowUpNotAccepted): the validator refused, or no run accepted it — the workflow had closed, or closed while
 * the update waited for its first workflow task ("workflow update was aborted by closing workflow"), which the
 * client reports as FollowUpNotAcceptedError; no validator ran then. Any other answer means the run accepted it.
 */
function answerOf(error: unknown): string {
  if (error instanceof WorkflowNotFoundError) return NOT_TAKEN;
  const failure = followUpFailureOf(error);
  if (failure === undefined) return error instanceof Error ? error.constructor.name : typeof error;
  return failure.type === FollowUpFailureType.notAccepted ? NOT_TAKEN : failure.type;
}

function causeOf(error: Error): string {
  const cause = error.cause;
  if (!(cause instanceof Error)) return '';
  const type = (cause as { type?: unknown }).type;
  return `${typeof type === 'string' ? type : cause.name}: ${cause.message}`;
}

export async function runExports(client: Client, exports: ExportSpec[], deadline: number): Promise<void> {
  await inBatches(exports, 10, (spec) =>
    retrying(
      () =>
        startVisitorsExport(client, {
          projectId: spec.projectId,
          dateFrom: spec.dateFrom,
          dateTo: spec.dateTo,
          format: spec.format,
          concurrency: 4,
        }),
      deadline,
    ).then(() => undefined),
  );
}

async function inBatches<T>(items: T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(each));
  }
}
