export type RouteName = 'createJob' | 'getJob' | 'sendMessage' | 'getVisitors';
export type JobOutcome = 'completed' | 'completed-no-edits' | 'failed' | 'archived';
export type JobStatus = 'active' | 'completed' | 'failed' | 'archived';

export interface JobBehaviour {
  /** How long a job (or a job re-activated by a message) stays active. Default 2000. */
  durationMs: number;
  /** Default 'completed'. */
  outcome: JobOutcome;
  /** For outcome 'archived': completed first, archived this long after completion (0 = archived straight from active). */
  archiveAfterMs?: number | undefined;
}

export interface ProjectConfig {
  jobs?: { [K in keyof JobBehaviour]?: JobBehaviour[K] | undefined } | undefined;
  /** Number of paths of the project's analytics data set (0 to 1,000,000). */
  visitorPaths?: number | undefined;
  /**
   * Rows deleted from the project's data since the service started: every range's first N rows are gone while
   * its totals stay as they were (a page that shifts under offset paging). Set mid-export to remove rows.
   */
  removedRows?: number | undefined;
  /** The shape of the project's error bodies, over the simulator's `errorBodies`. */
  errorBodies?: ErrorBodies | undefined;
}

export interface SimulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string | undefined;
  /** Default 0 (ephemeral). */
  port?: number | undefined;
  /** The accepted admin key, `<letters/digits>_<secret>`; default a random 'sim_<32 hex>'. */
  apiKey?: string | undefined;
  /** Defaults for every project. */
  jobs?: { [K in keyof JobBehaviour]?: JobBehaviour[K] | undefined } | undefined;
  /** Default 120 paths per project; the seed makes a different (still deterministic) data set. */
  analytics?: { paths?: number; seed?: string } | undefined;
  /**
   * The service's budgets in fixed windows: `analytics` per key (organization), shared by every project (off
   * unless given); `agent` per project, shared by create and message (default 100 per hour, as the service).
   * Compress them for tests (20 per 10 s).
   */
  budgets?: BudgetsConfig | undefined;
  /** ms since the epoch; default Date.now. Drives job transitions, rate limits, log times and the default date range. */
  clock?: () => number | undefined;
  /** Request log entries kept, oldest dropped first; default 200,000. */
  maxLogEntries?: number | undefined;
  /**
   * Error bodies of the service routes. 'service' (default): as the real service documents them,
   * `{ "error": "<message>" }`, analytics adding `details: [{ "message" }]`. 'detailed': the older
   * `{ "error": { code, message, field? } }`, which tests of the simulator itself find easier to assert on (a
   * project can choose its own: ProjectConfig.errorBodies). The control routes always answer 'detailed'.
   */
  errorBodies?: ErrorBodies | undefined;
}

export type ErrorBodies = 'service' | 'detailed';

export type BudgetName = 'analytics' | 'agent';

export interface BudgetSpec {
  requests: number;
  windowMs: number;
  /** Send Retry-After (seconds to the end of the window) with a refusal; default true. */
  retryAfter?: boolean | undefined;
}

export type BudgetsConfig = { [K in BudgetName]?: BudgetSpec | undefined };

/** null turns a budget off; an absent one stays as it is. */
export type BudgetChanges = { [K in BudgetName]?: BudgetSpec | null | undefined };

export type FaultKind =
  'latency' | 'status' | 'rateLimit' | 'hang' | 'reset' | 'malformed' | 'drift' | 'redirect';

export interface FaultRule {
  route: RouteName | '*';
  /** Only requests for this project. */
  projectId?: string | undefined;
  kind: FaultKind;
  /** 'latency' (required): delay, then answer normally. */
  latencyMs?: number | undefined;
  /** 'status' (required): 400..599, answered with a JSON error body. */
  status?: number | undefined;
  /** 'rateLimit' (default 1 second) and optionally 'status': Retry-After as seconds or as an HTTP date that far ahead. */
  retryAfter?: { seconds: number } | { httpDateInSeconds: number } | undefined;
  /** 'status', 'reset', 'hang': the service acted (job created, message recorded) before failing. Default false. */
  afterProcessing?: boolean | undefined;
  /** 'malformed' (required): applied to 2xx answers only. */
  malformed?: 'not-json' | 'html-200' | 'no-content-type' | 'truncated-json' | undefined;
  /** 'drift' (required): schema drift in an otherwise 2xx answer. */
  drift?: Drift | undefined;
  /** 'redirect': a 3xx (default 301) to `location` (default: the same URL over https); nothing is processed. */
  redirect?: { status?: RedirectStatus | undefined; location?: string | undefined } | undefined;
  /** Apply to the next N matching requests; default unlimited until removed. */
  times?: number | undefined;
  /** 0..1, drawn from a seeded deterministic generator (re-seeded by clear and reset). */
  probability?: number | undefined;
}

/**
 * Schema drift of a 2xx answer. 'wrong-types': a field the worker uses has the wrong type (a job's status, a page's
 * hasMore). 'odd-optional-types': fields the worker does not need have other types than documented (a job's
 * `model` an object, `createdAt` a number, `source` a string; a page's extra fields of any type).
 * 'null-ref': a job's `source.ref` is null, as the service documents it may be.
 */
export type Drift =
  | 'unknown-status'
  | 'missing-id'
  | 'extra-fields'
  | 'wrong-types'
  | 'odd-optional-types'
  | 'null-ref'
  | 'archivedAt-omitted';

export const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;
export type RedirectStatus = (typeof REDIRECT_STATUSES)[number];

export interface FaultController {
  /** Validates the rule (throws a TypeError naming the field) and returns its id. */
  add(rule: FaultRule): string;
  remove(id: string): void;
  clear(): void;
  list(): FaultRule[];
}

export interface SimulatorStats {
  /** Requests that reached an operation's path with its method, whatever the answer. */
  requests: Record<RouteName, number>;
  jobsCreated: number;
  jobsCreatedByProject: Record<string, number>;
  messagesAccepted: number;
  /** Requests refused with 429 by each budget (not those of 'rateLimit' faults or the hourly route limits). */
  budgetRefusals: Record<BudgetName, number>;
  /** Answers of the service routes (not of /__sim/ routes), by status, plus 'reset' and 'hang'. */
  responsesByStatus: Record<string, number>;
}

export interface RequestLogEntry {
  /** 1, 2, … in arrival order (restarts after reset). */
  seq: number;
  /** The x-request-id the answer carries (or would have carried, for a reset or hang). */
  requestId: string;
  /** Arrival time, ms since the epoch, from the simulator's clock. */
  at: number;
  route: RouteName | 'control' | 'unknown';
  method: string;
  /** The path as received (still percent-encoded). */
  path: string;
  query: Record<string, string>;
  projectId?: string | undefined;
  jobId?: string | undefined;
  prompt?: string | undefined;
  /** The W3C trace context the request carried (`traceparent` header), as a traced worker sends it. */
  traceparent?: string | undefined;
  /** The status sent; 0 while the answer is still pending (e.g. during injected latency). */
  status: number | 'reset' | 'hang';
  fault?: FaultKind | undefined;
  /** The service acted: job created or read, message recorded, analytics page computed. */
  processed: boolean;
  /** A valid key was presented (always true for /__sim/ routes, which need none). */
  authOk: boolean;
}

export interface SimJobSnapshot {
  id: string;
  projectId: string;
  status: JobStatus;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
  prompt: string;
  messages: { prompt: string; at: number }[];
}

export interface Simulator {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly url: string;
  readonly apiKey: string;
  /** Validates (throws a TypeError naming the field) and merges into the project's configuration. */
  configureProject(projectId: string, cfg: ProjectConfig): void;
  readonly faults: FaultController;
  /** Forces the terminal transition now; throws for an unknown job. */
  completeJob(jobId: string, outcome?: JobOutcome): void;
  stats(): SimulatorStats;
  requests(): readonly RequestLogEntry[];
  job(jobId: string): SimJobSnapshot | undefined;
  /**
   * Computes and caches a project's visitors for a range, as its first getVisitors request would (without
   * spending a request): benchmarks call it so that no timed client pays the simulator's own first computation.
   */
  warmVisitors(projectId: string, dateFrom: string, dateTo: string): void;
  /** Replaces budgets (null turns one off); their windows start afresh. */
  configureBudgets(changes: BudgetChanges): void;
  /** A foreign spender: uses up to `requests` of the current window of a budget; returns how many it got. */
  spendBudget(name: BudgetName, requests: number, projectId?: string): number;
  /** Clears jobs, faults, counters, log, budget windows and project configuration (budgets stay configured). */
  reset(): void;
  /** Stops listening and destroys open and hanging connections; idempotent. */
  close(): Promise<void>;
}
