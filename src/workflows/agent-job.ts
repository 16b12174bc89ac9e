export { agentJob } from './agent-job/workflow';
