// What a caller's workflow imports (`@docs-agent/client/nexus`): the Nexus service definition and the endpoint's
// name, safe in the workflow sandbox (no client, no zod at run time). The operations' types come with it.
export { docsAgentNexusService, type DocsAgentNexusService } from '../contract/nexus-service';
export { DEFAULT_NEXUS_ENDPOINT, NEXUS_SERVICE } from '../contract/names';
export type { AgentJobInput, AgentJobResult } from '../contract/agent-job';
export type { VisitorsExportInput, VisitorsExportResult } from '../contract/visitors-export';
