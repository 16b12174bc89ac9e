import { Context, log } from '@temporalio/activity';
import type { AgentJob } from '../contract/agent-job';
import type { AgentJobCreateRecord } from '../contract/agent-job';
import { STATUS_UNREAD } from '../contract/agent-job-constants';
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
}

/** A call made on an exclusive permit of the project's agent budget: the activity gives it back itself. */
export interface PermitHeld {
  permitId?: string;
}

/** A release that takes longer than this is given up (logged): the limiter's hold timeout frees the permit. */
const RELEASE_TIMEOUT_MS = 10_000;

/**
 * The job as answered, with the fields dropped for their unexpected type (only when there were some).
 * `recorded`: the create was not sent, its workflow id had created this job before (status STATUS_UNREAD).
 */
export type AgentJobAnswer = AgentJob & { responseWarnings?: string[]; recorded?: true };

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
  return {
    /**
     * Creates the job once per workflow id: a create its workflow id already made (a run reset to before it) is
     * answered from the create record and not sent; a new job's record is written before the answer returns, so
     * that a run terminated meanwhile does not lose it.
     */
    createAgentJob: (input: { projectId: string; prompt: string } & PermitHeld): Promise<AgentJobAnswer> =>
      released(input, async () => {
        const run = createRecords && Context.current().info.workflowExecution;
        const earlier = run && (await createRecords?.read(run.workflowId));
        if (earlier !== undefined) {
          log.warn('This workflow created its job before (its run was reset): not created again', {
            jobId: earlier.jobId,
            createdByRun: earlier.runId,
          });
          return { id: earlier.jobId, status: STATUS_UNREAD, prLink: null, recorded: true };
        }
        const job = await answer((options) =>
          docsApi.createJob(input.projectId, { prompt: input.prompt }, options),
        );
        if (run && createRecords) {
          const record = {
            workflowId: run.workflowId,
            runId: run.runId,
            projectId: input.projectId,
            jobId: job.id,
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
