export * from '../../src/workflows';
export { idleWorkflow } from './with-zod';
