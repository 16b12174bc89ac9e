export { agentJob } from './agent-job/workflow';
export { visitorsExport } from './visitors-export/workflow';
export { docsBudgetLimiter } from './budget/limiter';
export { visitorsExportWatermark } from './visitors-export/watermark';
