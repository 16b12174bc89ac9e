import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { AgentJob, AgentJobCreateRecord, AlreadyCreatedBy } from '../contract/agent-job';
import { AgentJobFailureType, STATUS_UNREAD } from '../contract/agent-job-constants';
import type { DocsApiFailureDetails } from '../contract/failure-types';
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

/** The create activity could not read its workflow id's create record from Temporal: nothing was sent. */
const CREATE_RECORD_UNREADABLE = 'CreateRecordUnreadable';

/** A release that takes longer than this is given up (logged): the limiter's hold timeout frees the permit. */
const RELEASE_TIMEOUT_MS = 10_000;

/**
 * The job as answered, with the fields dropped for their unexpected type (only when there were some).
 * `alreadyCreatedBy`: the create was not sent, its workflow id had created this job before (status STATUS_UNREAD).
 */
export type AgentJobAnswer = AgentJob & { responseWarnings?: string[]; alreadyCreatedBy?: AlreadyCreatedBy };

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
          releaseId: `${ref.permitId}/release`,
          permitId: ref.permitId,
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
        type: CREATE_RECORD_UNREADABLE,
        message: `The create was not sent: the job's create record could not be read (${error instanceof Error ? error.message : String(error)})`,
        details: [details],
      });
    }
  }
  /** A create this workflow id sent before: the same prompt is answered with its job, anything else refused. */
  async function answerFromRecord(
    earlier: AgentJobCreateRecord,
    promptSha256: string,
  ): Promise<AgentJobAnswer> {
    const createdBy = { runId: earlier.runId, recordedAt: earlier.recordedAt };
    if (earlier.jobId !== undefined && earlier.promptSha256 === promptSha256) {
      log.warn('This workflow id created its job before: not created again', {
        jobId: earlier.jobId,
        ...createdBy,
      });
      return { id: earlier.jobId, status: STATUS_UNREAD, prLink: null, alreadyCreatedBy: createdBy };
    }
    throw keyInUse(earlier, earlier.jobId === undefined ? undefined : await createRecords?.jobEnd(earlier));
  }
  return {
    /**
     * Creates the job once per workflow id. A workflow id that sent a create before (a run reset to before it, or
     * started again under the same id) is answered from its create record with the same prompt, and refused as
     * AgentJobKeyInUse with another (or when that create's outcome is unknown): nothing is sent. A new job's
     * record is written before the answer returns, so that a run terminated meanwhile does not lose it.
     */
    createAgentJob: (input: { projectId: string; prompt: string } & PermitHeld): Promise<AgentJobAnswer> =>
      released(input, async () => {
        const run = createRecords && Context.current().info.workflowExecution;
        const promptSha256 = sha256(input.prompt);
        const earlier = run && (await readRecord(run.workflowId));
        if (earlier !== undefined) return answerFromRecord(earlier, promptSha256);
        const job = await answer((options) =>
          docsApi.createJob(input.projectId, { prompt: input.prompt }, options),
        );
        if (run && createRecords) {
          const record = {
            workflowId: run.workflowId,
            runId: run.runId,
            projectId: input.projectId,
            jobId: job.id,
            promptSha256,
            recordedAt: new Date().toISOString(),
          };
          await createRecords.write(record).catch((error: unknown) => {
            // The run still gets the answer: only a run terminated at this very moment would lose the id.
            log.error('The create record could not be written', {
              jobId: job.id,
              error: error instanceof Error ? error.message : String(error),
            });
          });
        }
        return job;
      }),

    /**
     * Records that this run's create may have reached the service without an answer (run by the workflow when
     * the create's outcome is unknown): a later run under the same id is refused, never creates a second job.
     */
    async recordUnknownCreate(input: { projectId: string; prompt: string }): Promise<void> {
      const run = Context.current().info.workflowExecution;
      if (!createRecords || !run) return;
      await createRecords.write({
        workflowId: run.workflowId,
        runId: run.runId,
        projectId: input.projectId,
        promptSha256: sha256(input.prompt),
        recordedAt: new Date().toISOString(),
      });
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

/** The refusal of a second create under one workflow id, naming the earlier job and what to do instead. */
function keyInUse(
  earlier: AgentJobCreateRecord,
  end: { status: string; prLink: string | null } | undefined,
): ApplicationFailure {
  const by = `run ${earlier.runId} of workflow ${earlier.workflowId} (${earlier.recordedAt})`;
  const what =
    earlier.jobId === undefined
      ? `sent a create whose outcome is unknown (${by}): a job may exist at the service for project ${earlier.projectId}`
      : `created job ${earlier.jobId} for another prompt (${by}); ` +
        (end === undefined
          ? 'its runs ended without its final status'
          : `status ${end.status}, ${end.prLink === null ? 'no pull request' : `pull request ${end.prLink}`}`);
  return ApplicationFailure.create({
    type: AgentJobFailureType.keyInUse,
    message: `This workflow id ${what}. One workflow id is one job: nothing was sent. Start the new prompt under a new workflow id (a new --key).`,
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
