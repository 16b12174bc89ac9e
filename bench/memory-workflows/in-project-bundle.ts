export * from '../../src/workflows';
// The project's workflows are zod-free: so is the idle workflow beside them.
export { idleWorkflow } from './sdk-only';
