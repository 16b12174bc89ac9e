import { Context } from '@temporalio/activity';
import type { AgentJob } from '../contract/agent-job';
import type { DocsApiClient } from '../docs-api/client';
import { toApplicationFailure, type FailureMappingOptions } from './failures';
import { pollUntilTerminal, type PollUntilTerminalInput, type PolledJob } from './poll-agent-job';

export interface AgentJobActivityDeps extends FailureMappingOptions {
  docsApi: DocsApiClient;
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
export function createAgentJobActivities({ docsApi, ...mapping }: AgentJobActivityDeps) {
  const signal = (): AbortSignal => Context.current().cancellationSignal;
  return {
    async createAgentJob(input: { projectId: string; prompt: string }): Promise<AgentJob> {
      try {
        return await docsApi.createJob(input.projectId, { prompt: input.prompt }, { signal: signal() });
      } catch (error) {
        throw toApplicationFailure(error, mapping);
      }
    },

    async getAgentJob(ref: AgentJobRef): Promise<AgentJob> {
      try {
        return await docsApi.getJob(ref.projectId, ref.jobId, { signal: signal() });
      } catch (error) {
        throw toApplicationFailure(error, mapping);
      }
    },

    /** One read per attempt; its retries are the polling (see poll-agent-job.ts). */
    async pollAgentJob(input: PollUntilTerminalInput): Promise<PolledJob> {
      return pollUntilTerminal(docsApi, mapping, input);
    },

    async sendAgentJobMessage(input: AgentJobRef & { prompt: string }): Promise<AgentJob> {
      try {
        return await docsApi.sendMessage(
          input.projectId,
          input.jobId,
          { prompt: input.prompt },
          { signal: signal() },
        );
      } catch (error) {
        throw toApplicationFailure(error, mapping);
      }
    },
  };
}
