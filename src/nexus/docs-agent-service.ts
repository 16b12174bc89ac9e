import * as nexus from 'nexus-rpc';
import { WorkflowRunOperationHandler, startWorkflow } from '@temporalio/nexus';
import { agentJobStartOptions } from '../client/agent-job';
import { visitorsExportStartOptions } from '../client/visitors-export';
import { docsAgentNexusService } from '../contract/nexus-service';
import { WorkflowType } from '../contract/names';
import { InputValidationError } from '../contract/validation';
import type { agentJob } from '../workflows/agent-job/workflow';
import type { visitorsExport } from '../workflows/visitors-export/workflow';

/**
 * The handler of the Nexus service `docs-agent`, served by the worker on its task queue. Each operation starts
 * the workflow of its name exactly as the typed client does (same id scheme, policies, summary, search
 * attributes), linked to the caller's operation: its result is the workflow's. A retried request carries the
 * same request id, which names the job (`agent-job/<projectId>/nexus-<requestId>`), so it starts nothing twice;
 * an export's id is its range, so two callers of one range share one run. Bad input is a BAD_REQUEST naming the
 * field and the rule, and nothing starts.
 */
export function createDocsAgentNexusHandler(taskQueue: string) {
  return nexus.serviceHandler(docsAgentNexusService, {
    agentJob: new WorkflowRunOperationHandler(async (ctx, input) =>
      startWorkflow<typeof agentJob>(
        ctx,
        WorkflowType.agentJob,
        checked(() => agentJobStartOptions(input, { key: `nexus-${ctx.requestId}`, taskQueue })),
      ),
    ),
    visitorsExport: new WorkflowRunOperationHandler(async (ctx, input) =>
      startWorkflow<typeof visitorsExport>(
        ctx,
        WorkflowType.visitorsExport,
        checked(() => visitorsExportStartOptions(input, { taskQueue })),
      ),
    ),
  });
}

function checked<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof InputValidationError) {
      throw new nexus.HandlerError('BAD_REQUEST', error.message, { cause: error, retryableOverride: false });
    }
    throw error;
  }
}
