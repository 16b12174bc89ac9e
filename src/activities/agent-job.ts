import { Context } from '@temporalio/activity';
import type { AgentJob } from '../contract/agent-job';
import type { DocsApiClient } from '../docs-api/client';
import { toApplicationFailure, type FailureMappingOptions } from './failures';

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
