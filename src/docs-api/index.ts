export * from './api-key';
export * from './errors';
export * from './client';
export type { VisitorsQuery } from './arguments';
export type { VisitorRow, VisitorsPage } from '../contract/visitors-export';
export { parseRetryAfter } from './retry-after';
export * from './failure-types';
