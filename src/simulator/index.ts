export { startSimulator, type Simulator } from './server';
export type { FaultController } from './faults';
export type * from './types';
