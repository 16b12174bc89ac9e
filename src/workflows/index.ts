import { agentJob } from './agent-job/workflow';
import { agentJobCreateRecord } from './agent-job/create-record';
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
