import { agentJob, agentJobCreateRecord } from './agent-job/workflow';
import { docsBudgetLimiter } from './budget/limiter';
import { visitorsExport } from './visitors-export/workflow';
import { visitorsNightly } from './visitors-nightly/workflow';
import { declareVersioningBehaviors } from './versioning';

declareVersioningBehaviors({
  agentJob,
  agentJobCreateRecord,
  visitorsExport,
  visitorsNightly,
  docsBudgetLimiter,
});

export { agentJob, agentJobCreateRecord, visitorsExport, visitorsNightly, docsBudgetLimiter };
