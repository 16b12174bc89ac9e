import type { AgentJobCreateRecord, AgentJobInput, AgentJobResult } from './agent-job';
import type { VisitorsExportInput, VisitorsExportResult } from './visitors-export';

// The workflows' signatures, for typed handles (`WorkflowHandle<AgentJobWorkflow>`): what a caller needs to know
// of a workflow, without importing its code (and the worker with it).

export type AgentJobWorkflow = (input: AgentJobInput) => Promise<AgentJobResult>;
export type VisitorsExportWorkflow = (input: VisitorsExportInput) => Promise<VisitorsExportResult>;
export type AgentJobCreateRecordWorkflow = (record: AgentJobCreateRecord) => Promise<AgentJobCreateRecord>;
