export { agentJob } from './agent-job';
export { visitorsExport } from './visitors-export';
