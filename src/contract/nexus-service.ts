import * as nexus from 'nexus-rpc';
import type { AgentJobCreateRecord, AgentJobInput, AgentJobResult } from './agent-job';
import { NEXUS_SERVICE, WorkflowType } from './names';
import type { VisitorsExportInput, VisitorsExportResult } from './visitors-export';

/**
 * The Nexus service `docs-agent`: what a caller in another namespace names. Each operation runs the workflow of
 * the same name and has its input and result. TypeScript callers pass this definition to `createNexusClient`.
 */
export const docsAgentNexusService = nexus.service(NEXUS_SERVICE, {
  agentJob: nexus.operation<AgentJobInput, AgentJobResult>({ name: WorkflowType.agentJob }),
  visitorsExport: nexus.operation<VisitorsExportInput, VisitorsExportResult>({
    name: WorkflowType.visitorsExport,
  }),
});

export type DocsAgentNexusService = typeof docsAgentNexusService;

// The workflows' signatures, for typed handles (`WorkflowHandle<AgentJobWorkflow>`): what a caller needs to know
// of a workflow, without importing its code (and the worker with it).
export type AgentJobWorkflow = (input: AgentJobInput) => Promise<AgentJobResult>;
export type VisitorsExportWorkflow = (input: VisitorsExportInput) => Promise<VisitorsExportResult>;
export type AgentJobCreateRecordWorkflow = (record: AgentJobCreateRecord) => Promise<AgentJobCreateRecord>;
