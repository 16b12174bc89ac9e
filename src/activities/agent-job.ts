import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type {
  AgentJob,
  AgentJobCreateRecord,
  AgentJobInput,
  AlreadyCreatedBy,
  EarlierFollowUps,
} from '../contract/agent-job';
import {
  AgentJobActivityFailureType,
  AgentJobFailureType,
  POLL_JITTER_RATIO,
  STATUS_UNREAD,
  callOutcomeOf,
  isTerminal,
  pollProgressIn,
  type PollProgress,
} from '../contract/agent-job-constants';
import type { DocsApiFailureDetails } from '../contract/failure-types';
import type { EarlierCreate } from '../client/agent-job-runs';
import type { BudgetRelease } from '../contract/budget';
import type { DocsApiClient, RequestOptions } from '../docs-api/client';

export interface AgentJobActivityDeps {
  /** Operator opt-in (DOCS_API_RETRY_UNKNOWN_OUTCOME): a create or message whose outcome is unknown may be re-sent. */
  retryUnknownOutcome?: boolean;
  docsApi: DocsApiClient;
  releasePermit?: (release: BudgetRelease) => Promise<unknown>;
  /** Where creates are recorded per workflow id (createActivities passes Temporal's, client/agent-job-runs.ts). */
  createRecords?: CreateRecords;
}

export interface CreateRecords {
  read(workflowId: string): Promise<AgentJobCreateRecord | undefined>;
  write(record: AgentJobCreateRecord): Promise<void>;
  /** The follow-ups the earlier runs of the job's workflow id sent and settled (none: undefined). */
  earlierFollowUps(workflowId: string, exceptRunId: string): Promise<EarlierFollowUps | undefined>;
  /** A create an earlier run of the workflow id sent that the service may have acted on (none: undefined). */
  earlierCreate(workflowId: string, exceptRunId: string): Promise<EarlierCreate | undefined>;
}

type PermitHeld = { permitId?: string };

/** A release that takes longer is given up (logged): the limiter's hold timeout frees the permit. */
const RELEASE_TIMEOUT_MS = 10_000;

/**
 * The job as answered, with the fields dropped for their unexpected type (only when there were some).
 * `alreadyCreatedBy`: the create was not sent, its workflow id had created this job before (status STATUS_UNREAD).
 * `unrecorded`: the create record could not be written.
 */
export type AgentJobAnswer = AgentJob & {
  responseWarnings?: string[];
  alreadyCreatedBy?: AlreadyCreatedBy;
  unrecorded?: true;
};

export interface PollInput {
  projectId: string;
  jobId: string;
  polling: { initialInterval: number; maxInterval: number; backoffCoefficient: number };
  /** The status the workflow shows: a read of another one returns, so that it shows it; null returns the first read. */
  status: string | null;
}

type CreateInput = Pick<AgentJobInput, 'projectId' | 'prompt'>;

/** A create to record: its job, or no `jobId` when the service may have created one without saying which. */
export type CreateToRecord = CreateInput & { jobId?: string | undefined };

/** createAgentJob and sendAgentJobMessage are not idempotent: the workflow re-sends only what callOutcomeOf allows. */
export function createAgentJobActivities({
  docsApi,
  releasePermit,
  createRecords,
  retryUnknownOutcome = false,
}: AgentJobActivityDeps) {
  /**
   * The permit goes back as soon as the service answered (or failed), from the activity itself: it is released
   * whatever happens to the workflow meanwhile (cancelled, terminated, reset). Bounded and never the call's
   * failure: a create the service answered returns its job even when the limiter cannot be reached.
   */
  async function released<T>(ref: { projectId: string } & PermitHeld, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } finally {
      if (ref.permitId !== undefined && releasePermit !== undefined) {
        const { projectId, permitId } = ref;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer in 10 s')), RELEASE_TIMEOUT_MS);
        });
        await Promise.race([releasePermit({ kind: 'agent', projectId, releases: [{ permitId }] }), timeout])
          .catch((error: unknown) => {
            log.warn('Permit release given up: the limiter frees it after its hold timeout', {
              projectId,
              error: messageOf(error),
            });
          })
          .finally(() => clearTimeout(timer));
      }
    }
  }
  /** One call with the activity's cancellation signal; dropped fields travel with the answer for the workflow to log. */
  async function answer(call: (options: RequestOptions) => Promise<AgentJob>): Promise<AgentJobAnswer> {
    const warnings: string[] = [];
    const job = await call({
      signal: Context.current().cancellationSignal,
      onWarning: (warning: string) => warnings.push(warning),
      retryUnknownOutcome,
    });
    return warnings.length === 0 ? job : { ...job, responseWarnings: warnings };
  }
  /** Nothing is sent while what decides the create cannot be read: the workflow sends it again later (safeToRetry). */
  async function readOrResend<T>(what: string, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      const details: DocsApiFailureDetails = { operation: 'createJob', safeToRetry: true };
      const message = `The create was not sent: ${what} could not be read (${messageOf(error)})`;
      throw ApplicationFailure.create({
        type: AgentJobActivityFailureType.createRecordUnreadable,
        message,
        details: [details],
      });
    }
  }
  /**
   * The create record of the workflow id. Without one, an earlier run may still have sent a create (its record's
   * writes failed and it was terminated, or the record is gone): read from the earlier runs' histories, it is
   * recorded now, and nothing is sent.
   */
  async function readRecord(
    records: CreateRecords,
    run: { workflowId: string; runId: string },
  ): Promise<AgentJobCreateRecord | undefined> {
    const { workflowId, runId } = run;
    const record = await readOrResend("the job's create record", () => records.read(workflowId));
    if (record !== undefined) return record;
    const earlier = await readOrResend("the earlier runs' creates", () =>
      records.earlierCreate(workflowId, runId),
    );
    if (earlier === undefined) return undefined;
    const found = recordOf({ workflowId, runId: earlier.runId }, earlier);
    await records.write(found).catch((error: unknown) => {
      log.error("The record of an earlier run's create could not be written", { error: messageOf(error) });
    });
    return (await readOrResend("the job's create record", () => records.read(workflowId))) ?? found;
  }
  /** Writes the record of this run's create; false when it could not (the workflow then writes it: recordCreate). */
  async function writeRecord(create: CreateToRecord): Promise<boolean> {
    const run = Context.current().info.workflowExecution;
    if (!createRecords || !run) return true;
    try {
      await createRecords.write(recordOf(run, create));
      return true;
    } catch (error) {
      log.error('The create record could not be written', { jobId: create.jobId, error: messageOf(error) });
      return false;
    }
  }
  return {
    /**
     * Creates the job once per workflow id. A workflow id that sent a create before (a run reset to before it, or
     * started again under the same id) is answered from its create record with the same project and prompt, and
     * refused as AgentJobKeyInUse otherwise (or when that create's outcome is unknown): nothing is sent. A create
     * the service may have acted on is recorded before the activity returns or fails, so that a run terminated
     * meanwhile does not lose it; `unrecorded` asks the workflow to record it when that failed.
     */
    createAgentJob: (input: CreateInput & PermitHeld): Promise<AgentJobAnswer> =>
      released(input, async () => {
        const run = Context.current().info.workflowExecution;
        const earlier = createRecords && run && (await readRecord(createRecords, run));
        if (earlier !== undefined) return answerFromRecord(earlier, input);
        let job: AgentJobAnswer;
        try {
          job = await answer((options) =>
            docsApi.createJob(input.projectId, { prompt: input.prompt }, options),
          );
        } catch (failure) {
          const { kind, details } = callOutcomeOf(
            failure instanceof ApplicationFailure ? failure : undefined,
          );
          if (kind === 'unknown') await writeRecord({ ...input, jobId: details?.jobId });
          throw failure;
        }
        return (await writeRecord({ ...input, jobId: job.id })) ? job : { ...job, unrecorded: true };
      }),

    /** What the latest earlier run of this workflow id that followed the job sent and settled (none: undefined). */
    async earlierFollowUps(): Promise<EarlierFollowUps | undefined> {
      const run = Context.current().info.workflowExecution;
      return createRecords && run && (await createRecords.earlierFollowUps(run.workflowId, run.runId));
    },

    /** Idempotent: a record's first write stays. */
    async recordCreate(create: CreateToRecord): Promise<void> {
      const run = Context.current().info.workflowExecution;
      if (createRecords && run) await createRecords.write(recordOf(run, create));
    },

    /**
     * One read per attempt: a terminal status, or another than `input.status`, returns the job; a job still
     * running fails the attempt (benign) with the next interval (pollDelayMs) as nextRetryDelay. A transient error
     * waits for its Retry-After, or the same interval.
     */
    async pollAgentJob(input: PollInput): Promise<{ job: AgentJob; polls: number }> {
      const context = Context.current();
      const progress = pollProgressIn(context.info.heartbeatDetails);
      const delayAfter = (reads: number) =>
        pollDelayMs(
          input.polling,
          reads,
          `${context.info.workflowExecution?.workflowId ?? input.jobId}#${reads + 1}`,
        );
      const stillRunning = (status: string, carried: PollProgress, delayMs: number, read = true) =>
        ApplicationFailure.create({
          type: AgentJobActivityFailureType.stillRunning,
          message: `job ${input.jobId} is ${status} (poll ${carried.polls})`,
          category: ApplicationFailureCategory.BENIGN,
          nextRetryDelay: delayMs,
          details: [{ status, ...carried, ...(read ? {} : { read: false }) }],
        });
      // The workflow knows the status from an answer just now: the first read comes one interval later.
      if (input.status !== null && context.info.attempt === 1) {
        throw stillRunning(input.status, progress, delayAfter(0), false);
      }
      let job: AgentJob;
      try {
        job = await docsApi.getJob(input.projectId, input.jobId, {
          signal: context.cancellationSignal,
          onWarning: (warning) => {
            context.log.warn('The service answered a field of an unexpected type: dropped', {
              jobId: input.jobId,
              warning,
            });
          },
        });
      } catch (failure) {
        if (!(failure instanceof ApplicationFailure) || failure.nonRetryable) throw failure;
        context.heartbeat({ ...progress, lastError: failure.message } satisfies PollProgress);
        // Without Retry-After, the poll interval, not the retry policy's own backoff.
        throw ApplicationFailure.create({
          message: failure.message,
          ...(failure.type == null ? {} : { type: failure.type }),
          details: [failure.details?.[0], { polls: progress.polls }],
          nextRetryDelay:
            failure.nextRetryDelay == null
              ? delayAfter(Math.max(1, progress.polls))
              : msToNumber(failure.nextRetryDelay),
        });
      }
      const polls = progress.polls + 1;
      if (isTerminal(job.status) || job.status !== input.status) {
        return { job, polls };
      }
      // The read succeeded: an earlier attempt's error is over, and no longer shown.
      const carried: PollProgress = { polls };
      context.heartbeat(carried);
      throw stillRunning(job.status, carried, delayAfter(polls));
    },

    sendAgentJobMessage: (
      input: { projectId: string; jobId: string; prompt: string } & PermitHeld,
    ): Promise<AgentJobAnswer> =>
      released(input, () =>
        answer((options) =>
          docsApi.sendMessage(input.projectId, input.jobId, { prompt: input.prompt }, options),
        ),
      ),
  };
}

/** Shortened by a jitter hashed from `jitterKey` (the workflow id and read number): deterministic. */
export function pollDelayMs(polling: PollInput['polling'], reads: number, jitterKey: string): number {
  const base = Math.min(polling.maxInterval, polling.initialInterval * polling.backoffCoefficient ** reads);
  let hash = 0x811c9dc5; // FNV-1a, 32 bit
  for (let i = 0; i < jitterKey.length; i++) hash = Math.imul(hash ^ jitterKey.charCodeAt(i), 0x01000193);
  return Math.max(1, Math.round(base * (1 - (POLL_JITTER_RATIO * (hash >>> 0)) / 0x1_0000_0000)));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function recordOf(run: { workflowId: string; runId: string }, create: CreateToRecord): AgentJobCreateRecord {
  return {
    workflowId: run.workflowId,
    runId: run.runId,
    projectId: create.projectId,
    ...(create.jobId === undefined ? {} : { jobId: create.jobId }),
    promptSha256: sha256(create.prompt),
    recordedAt: new Date().toISOString(),
  };
}

/**
 * A create this workflow id sent before: the same project and prompt are answered with its job (nothing is sent),
 * anything else refused as AgentJobKeyInUse, naming the earlier job.
 */
function answerFromRecord(earlier: AgentJobCreateRecord, input: CreateInput): AgentJobAnswer {
  const { workflowId, runId, recordedAt, jobId, projectId } = earlier;
  if (jobId !== undefined && projectId === input.projectId && earlier.promptSha256 === sha256(input.prompt)) {
    return { id: jobId, status: STATUS_UNREAD, prLink: null, alreadyCreatedBy: { runId, recordedAt } };
  }
  const by = `run ${runId} of workflow ${workflowId} (${recordedAt})`;
  throw ApplicationFailure.create({
    type: AgentJobFailureType.keyInUse,
    message:
      jobId === undefined
        ? `This workflow id sent a create whose outcome is unknown (${by}): a job may exist at the service for ` +
          `project ${projectId}. One workflow id is one job: nothing was sent. Look at the project's jobs at the ` +
          'service before starting under a new workflow id (a new --key).'
        : `This workflow id created job ${jobId} of project ${projectId} for another prompt or project (${by}). ` +
          'One workflow id is one job: nothing was sent. Start the new prompt under a new workflow id (a new --key).',
    nonRetryable: true,
    details: [{ workflowId, jobId: jobId ?? null, createdByRunId: runId, recordedAt }],
  });
}
