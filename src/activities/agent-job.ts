import { Context } from '@temporalio/activity';
import type { AgentJob } from '../contract/agent-job';
import type { DocsApiClient, RequestOptions } from '../docs-api/client';
import { toApplicationFailure, type FailureMappingOptions } from './failures';
import { pollUntilTerminal, type PollUntilTerminalInput, type PolledJob } from './poll-agent-job';

export interface AgentJobActivityDeps extends FailureMappingOptions {
  docsApi: DocsApiClient;
}

/** The job as answered, with the fields dropped for their unexpected type (only when there were some). */
export type AgentJobAnswer = AgentJob & { responseWarnings?: string[] };

export interface AgentJobRef {
  projectId: string;
  jobId: string;
}

/**
 * Activities of the agent job workflow. createAgentJob and sendAgentJobMessage are not idempotent:
 * the workflow runs them with a single attempt and re-sends only when the failure details say
 * safeToRetry (see docs/architecture.md).
 */
export function createAgentJobActivities({ docsApi, ...mapping }: AgentJobActivityDeps) {
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
    createAgentJob: (input: { projectId: string; prompt: string }): Promise<AgentJobAnswer> =>
      answer((options) => docsApi.createJob(input.projectId, { prompt: input.prompt }, options)),

    getAgentJob: (ref: AgentJobRef): Promise<AgentJobAnswer> =>
      answer((options) => docsApi.getJob(ref.projectId, ref.jobId, options)),

    /** One read per attempt; its retries are the polling (see poll-agent-job.ts). */
    async pollAgentJob(input: PollUntilTerminalInput): Promise<PolledJob> {
      return pollUntilTerminal(docsApi, mapping, input);
    },

    sendAgentJobMessage: (input: AgentJobRef & { prompt: string }): Promise<AgentJobAnswer> =>
      answer((options) =>
        docsApi.sendMessage(input.projectId, input.jobId, { prompt: input.prompt }, options),
      ),
  };
}
