import { agentJob } from './agent-job/workflow';
import { docsBudgetLimiter } from './budget/limiter';
import { visitorsExport } from './visitors-export/workflow';
import { visitorsExportWatermark } from './visitors-export/watermark';
import { declareVersioningBehaviors } from './versioning';

declareVersioningBehaviors({ agentJob, visitorsExport, docsBudgetLimiter, visitorsExportWatermark });

export { agentJob, visitorsExport, docsBudgetLimiter, visitorsExportWatermark };
