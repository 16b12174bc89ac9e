import { agentJob } from './agent-job/workflow';
import { agentJobCreateRecord } from './agent-job/create-record';
import { docsBudgetLimiter } from './budget/limiter';
import { visitorsExport } from './visitors-export/workflow';
import { visitorsExportWatermark } from './visitors-export/watermark';
import { declareVersioningBehaviors } from './versioning';

declareVersioningBehaviors({
  agentJob,
  agentJobCreateRecord,
  visitorsExport,
  docsBudgetLimiter,
  visitorsExportWatermark,
});

export { agentJob, agentJobCreateRecord, visitorsExport, docsBudgetLimiter, visitorsExportWatermark };
