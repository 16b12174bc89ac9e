export { agentJob, agentJobCreateRecord } from './agent-job/workflow';
export { docsBudgetLimiter } from './budget/limiter';
export { visitorsExport } from './visitors-export/workflow';
export { visitorsNightly } from './visitors-nightly/workflow';
