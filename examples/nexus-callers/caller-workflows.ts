// A TypeScript caller of the Nexus service `docs-agent`: workflows of another team, in their own namespace, that
// run an agent job and a visitors export through the endpoint. Register this file's workflows on a worker of the
// caller's namespace (see run-caller.ts); the endpoint routes the operations to the docs-agent worker.
import { createNexusServiceClient } from '@temporalio/workflow';
import {
  DEFAULT_NEXUS_ENDPOINT,
  docsAgentNexusService,
  type AgentJobInput,
  type AgentJobResult,
  type VisitorsExportInput,
  type VisitorsExportResult,
} from '@docs-agent/client/nexus';

const docsAgent = () =>
  createNexusServiceClient({ endpoint: DEFAULT_NEXUS_ENDPOINT, service: docsAgentNexusService });

/** Runs an agent job and returns its pull-request link (the operation's result is the workflow's). */
export async function documentFeature(input: AgentJobInput): Promise<string | null> {
  const result: AgentJobResult = await docsAgent().executeOperation('agentJob', input, {
    scheduleToCloseTimeout: '1 day',
  });
  return result.prLink;
}

/** Runs a visitors export and returns the files it wrote. */
export async function exportVisitors(input: VisitorsExportInput): Promise<string[]> {
  const result: VisitorsExportResult = await docsAgent().executeOperation('visitorsExport', input, {
    scheduleToCloseTimeout: '1 day',
  });
  return result.files;
}
