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
 * The Nexus service `docs-agent`: each operation starts its workflow as the typed client does. A retried request
 * carries the same request id, which names the job (`agent-job/<projectId>/nexus-<requestId>`), so it starts
 * nothing twice. Bad input is a BAD_REQUEST naming the field and the rule, and nothing starts.
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
