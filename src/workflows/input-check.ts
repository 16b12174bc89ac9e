import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

/**
 * The workflow's input checked against the contract's zod schema in a local activity, outside the sandbox
 * (zod evaluated in the sandbox costs about 1 MiB per cached workflow). Null when the input is valid.
 */
export const { checkWorkflowInput: invalidInputOf } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
});
