import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { AgentJob, AgentJobCreateRecord, AlreadyCreatedBy } from '../contract/agent-job';
import {
  AgentJobActivityFailureType,
  AgentJobFailureType,
  STATUS_UNREAD,
} from '../contract/agent-job-constants';
import { docsApiDetailsOf, type DocsApiFailureDetails } from '../contract/failure-types';
import type { ReleasePermit } from './budget';
import type { DocsApiClient, RequestOptions } from '../docs-api/client';
import { toApplicationFailure, type FailureMappingOptions } from './failures';
import { pollUntilTerminal, type PollUntilTerminalInput, type PolledJob } from './poll-agent-job';

export interface AgentJobActivityDeps extends FailureMappingOptions {
  docsApi: DocsApiClient;
  /** Gives the call's budget permit back (createActivities passes the budget activities' release). */
  releasePermit?: ReleasePermit;
  /** Where creates are recorded per workflow id (createActivities passes Temporal's, client/agent-job-record.ts). */
  createRecords?: CreateRecords;
}

export interface CreateRecords {
  read(workflowId: string): Promise<AgentJobCreateRecord | undefined>;
  write(record: AgentJobCreateRecord): Promise<void>;
  /** The created job's status and PR as its runs ended, when they did. */
  jobEnd(record: AgentJobCreateRecord): Promise<{ status: string; prLink: string | null } | undefined>;
}

/** A call made on an exclusive permit of the project's agent budget: the activity gives it back itself. */
export interface PermitHeld {
  permitId?: string;
}

/** A release that takes longer than this is given up (logged): the limiter's hold timeout frees the permit. */
const RELEASE_TIMEOUT_MS = 10_000;

/**
 * The job as answered, with the fields dropped for their unexpected type (only when there were some).
 * `alreadyCreatedBy`: the create was not sent, its workflow id had created this job before (status STATUS_UNREAD).
 * `unrecorded`: the job's create record could not be written.
 */
export type AgentJobAnswer = AgentJob & {
  responseWarnings?: string[];
  alreadyCreatedBy?: AlreadyCreatedBy;
  unrecorded?: true;
};

/** A create to record: its job, or no `jobId` when the service may have created one without saying which. */
export interface CreateToRecord {
  projectId: string;
  prompt: string;
  jobId?: string | undefined;
}

export interface AgentJobRef {
  projectId: string;
  jobId: string;
}

/**
 * Activities of the agent job workflow. createAgentJob and sendAgentJobMessage are not idempotent:
 * the workflow runs them with a single attempt and re-sends only when the failure details say
 * safeToRetry (see docs/architecture.md).
 */
export function createAgentJobActivities({
  docsApi,
  releasePermit,
  createRecords,
  ...mapping
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
        const release = releasePermit({
          kind: 'agent',
          projectId: ref.projectId,
          releases: [{ permitId: ref.permitId }],
        });
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer in 10 s')), RELEASE_TIMEOUT_MS);
        });
        await Promise.race([release, timeout])
          .catch((error: unknown) => {
            log.warn('Permit release given up: the limiter frees it after its hold timeout', {
              projectId: ref.projectId,
              error: error instanceof Error ? error.message : String(error),
            });
          })
          .finally(() => clearTimeout(timer));
      }
    }
  }
  /** One call with the activity's cancellation signal; dropped fields travel with the answer for the workflow to log. */
  async function answer(call: (options: RequestOptions) => Promise<AgentJob>): Promise<AgentJobAnswer> {
    const warnings: string[] = [];
    try {
      const options = {
        signal: Context.current().cancellationSignal,
        onWarning: (warning: string) => warnings.push(warning),
      };
      const job = await call(options);
      return warnings.length === 0 ? job : { ...job, responseWarnings: warnings };
    } catch (error) {
      throw toApplicationFailure(error, mapping);
    }
  }
  /** Nothing is sent while the record cannot be read: the workflow sends the create again later (safeToRetry). */
  async function readRecord(workflowId: string): Promise<AgentJobCreateRecord | undefined> {
    try {
      return await createRecords?.read(workflowId);
    } catch (error) {
      const details: DocsApiFailureDetails = { operation: 'createJob', safeToRetry: true };
      throw ApplicationFailure.create({
        type: AgentJobActivityFailureType.createRecordUnreadable,
        message: `The create was not sent: the job's create record could not be read (${messageOf(error)})`,
        details: [details],
      });
    }
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
    createAgentJob: (input: { projectId: string; prompt: string } & PermitHeld): Promise<AgentJobAnswer> =>
      released(input, async () => {
        const run = createRecords && Context.current().info.workflowExecution;
        const earlier = run && (await readRecord(run.workflowId));
        if (earlier !== undefined) return answerFromRecord(earlier, input, createRecords);
        let job: AgentJobAnswer;
        try {
          job = await answer((options) =>
            docsApi.createJob(input.projectId, { prompt: input.prompt }, options),
          );
        } catch (failure) {
          const outcome = createOutcomeOf(failure);
          if (outcome.mayExist) await writeRecord({ ...input, ...outcome });
          throw failure;
        }
        return (await writeRecord({ ...input, jobId: job.id })) ? job : { ...job, unrecorded: true };
      }),

    /**
     * The workflow's record of a create the service may have acted on, when the create activity could not write it
     * (its outcome unknown after a timeout, or its write failed). Idempotent: a record's first write stays.
     */
    async recordCreate(create: CreateToRecord): Promise<void> {
      const run = Context.current().info.workflowExecution;
      if (createRecords && run) await createRecords.write(recordOf(run, create));
    },

    /** One read per attempt; its retries are the polling (see poll-agent-job.ts). */
    async pollAgentJob(input: PollUntilTerminalInput): Promise<PolledJob> {
      return pollUntilTerminal(docsApi, mapping, input);
    },

    sendAgentJobMessage: (input: AgentJobRef & { prompt: string } & PermitHeld): Promise<AgentJobAnswer> =>
      released(input, () =>
        answer((options) =>
          docsApi.sendMessage(input.projectId, input.jobId, { prompt: input.prompt }, options),
        ),
      ),
  };
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
 * Whether a failed create may have created a job (neither refused nor safe to send again), and its id when the
 * answer named it.
 */
function createOutcomeOf(failure: unknown): { mayExist: boolean; jobId?: string } {
  if (!(failure instanceof ApplicationFailure)) return { mayExist: true };
  const details = docsApiDetailsOf(failure.details);
  if (failure.nonRetryable || details?.safeToRetry === true) return { mayExist: false };
  return { mayExist: true, ...(details?.jobId === undefined ? {} : { jobId: details.jobId }) };
}

/**
 * A create this workflow id sent before: the same project and prompt are answered with its job (nothing is sent),
 * anything else refused as AgentJobKeyInUse.
 */
async function answerFromRecord(
  earlier: AgentJobCreateRecord,
  input: { projectId: string; prompt: string },
  records: CreateRecords | undefined,
): Promise<AgentJobAnswer> {
  const same = earlier.projectId === input.projectId && earlier.promptSha256 === sha256(input.prompt);
  if (earlier.jobId !== undefined && same) {
    const alreadyCreatedBy = { runId: earlier.runId, recordedAt: earlier.recordedAt };
    return { id: earlier.jobId, status: STATUS_UNREAD, prLink: null, alreadyCreatedBy };
  }
  throw keyInUseRefusal(earlier, earlier.jobId === undefined ? undefined : await records?.jobEnd(earlier));
}

/** The refusal of a second create under one workflow id, naming the earlier job and what to do instead. */
function keyInUseRefusal(
  earlier: AgentJobCreateRecord,
  end: { status: string; prLink: string | null } | undefined,
): ApplicationFailure {
  const by = `run ${earlier.runId} of workflow ${earlier.workflowId} (${earlier.recordedAt})`;
  const pr = end?.prLink == null ? 'no pull request' : `pull request ${end.prLink}`;
  const ended = end === undefined ? 'its runs ended without its final status' : `status ${end.status}, ${pr}`;
  const message =
    earlier.jobId === undefined
      ? `This workflow id sent a create whose outcome is unknown (${by}): a job may exist at the service for ` +
        `project ${earlier.projectId}. One workflow id is one job: nothing was sent. Look at the project's jobs ` +
        'at the service before starting under a new workflow id (a new --key).'
      : `This workflow id created job ${earlier.jobId} of project ${earlier.projectId} for another prompt or ` +
        `project (${by}); ${ended}. One workflow id is one job: nothing was sent. Start the new prompt under a ` +
        'new workflow id (a new --key).';
  return ApplicationFailure.create({
    type: AgentJobFailureType.keyInUse,
    message,
    nonRetryable: true,
    details: [
      {
        workflowId: earlier.workflowId,
        jobId: earlier.jobId ?? null,
        ...(end === undefined ? {} : end),
        createdByRunId: earlier.runId,
        recordedAt: earlier.recordedAt,
      },
    ],
  });
}
