/** The package's client module: typed functions for other services, plus the contract's definitions. */
export * from '../contract';
export * from './connect';
export * from './agent-jobs';
export * from './exports';
export * from './schedules';
