export type RouteName = 'createJob' | 'getJob' | 'sendMessage' | 'getVisitors';
export type JobOutcome = 'completed' | 'completed-no-edits' | 'failed' | 'archived';

export interface JobBehaviour {
  /** How long a job (or a job re-activated by a message) stays active. */
  durationMs: number;
  outcome: JobOutcome;
  /** For outcome 'archived': shown completed for this long before archived (0 = archived straight away). */
  archiveAfterMs: number;
}

export interface ProjectConfig {
  jobs?: Partial<JobBehaviour>;
  visitorPaths?: number;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  apiKey?: string;
  jobs?: Partial<JobBehaviour>;
  analytics?: { paths?: number; seed?: string };
  rateLimit?: { createPerHour?: number; messagePerHour?: number };
  clock?: () => number;
  /** Request log entries kept (oldest dropped first). */
  maxLogEntries?: number;
}

export interface FaultRule {
  route: RouteName | '*';
  projectId?: string;
  kind: 'latency' | 'status' | 'rateLimit' | 'hang' | 'reset' | 'malformed' | 'drift';
  latencyMs?: number;
  status?: number;
  retryAfter?: { seconds: number } | { httpDateInSeconds: number };
  /** The service acts (job created, message recorded) before the fault. */
  afterProcessing?: boolean;
  malformed?: 'not-json' | 'html-200' | 'no-content-type' | 'truncated-json';
  drift?: 'unknown-status' | 'missing-id' | 'extra-fields' | 'wrong-types' | 'archivedAt-omitted';
  times?: number;
  probability?: number;
}

export interface SimulatorStats {
  requests: Record<RouteName, number>;
  jobsCreated: number;
  jobsCreatedByProject: Record<string, number>;
  messagesAccepted: number;
  responsesByStatus: Record<string, number>;
}

export interface RequestLogEntry {
  seq: number;
  at: number;
  route: RouteName | 'control' | 'unknown';
  method: string;
  path: string;
  query: Record<string, string>;
  projectId?: string;
  jobId?: string;
  prompt?: string;
  status: number | 'reset' | 'hang';
  fault?: FaultRule['kind'];
  processed: boolean;
  authOk: boolean;
}

export interface SimJobSnapshot {
  id: string;
  projectId: string;
  status: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
  prompt: string;
  messages: { prompt: string; at: number }[];
}
