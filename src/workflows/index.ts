export { agentJob } from './agent-job';
export { visitorsExport } from './visitors-export';
export { docsBudgetLimiter } from './budget-limiter/workflow';
export { visitorsExportWatermark } from './visitors-export/watermark';
