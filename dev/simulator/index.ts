export { startSimulator } from './server';
export type {
  FaultController,
  FaultKind,
  FaultRule,
  JobBehaviour,
  JobOutcome,
  JobStatus,
  ProjectConfig,
  RequestLogEntry,
  RouteName,
  SimJobSnapshot,
  Simulator,
  SimulatorOptions,
  SimulatorStats,
} from './types';
