export * from './names';
export * from './duration';
export * from './validation';
export * from './api-dates';
export * from './agent-job';
export * from './visitors-export';
export * from './messages';
export * from './budget';
