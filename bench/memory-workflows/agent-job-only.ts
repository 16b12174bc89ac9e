// The workflows an agent job runs, without the exports': what the sandbox evaluates for each cached agentJob
// when the worker's bundle holds nothing else.
export { agentJob, agentJobCreateRecord } from '../../src/workflows/agent-job/workflow';
export { docsBudgetLimiter } from '../../src/workflows/budget/limiter';
