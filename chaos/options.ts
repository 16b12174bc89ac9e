import type { RateBudget } from '../src/contract/budget';
import type { OperatorOptions } from './operator-plan';

/** The size and timing of one fault campaign. */
export interface CampaignOptions {
  name: 'full' | 'quick' | 'exhausted' | 'operators' | 'operators-quick';
  /** Projects the jobs are spread over (the service allows 100 creates and 100 messages per project-hour). */
  jobProjects: number;
  jobsPerProject: number;
  /** Follow-ups per job, alternately by signal and by update. */
  followUpsPerJob: number;
  exports: number;
  /** Rows of the largest export; exports range from a tenth of it to all of it. */
  maxExportRows: number;
  /** Seconds after the first start at which the worker is killed with SIGKILL. */
  workerKillsAt: number[];
  /** Seconds after the first start at which the Temporal dev server is restarted on its database. */
  serverRestartsAt: number[];
  /** Requests that hang (until the client's 30 s timeout): a handful, each costs half a minute. */
  hangs: number;
  /** Every workflow must be closed this long after the first start. */
  deadlineSeconds: number;
  /**
   * Small service budgets, with the worker configured to match (DOCS_API_*_RATE_LIMIT). Absent: the service's
   * default agent budget (100 per project-hour) and a worker that spends without a budget.
   */
  budgets?: { analytics: RateBudget; agent: RateBudget };
  /** A foreign spender on the same key wants this share of every budget window and ignores Retry-After. */
  foreignShare?: number;
  /** Budget refusals (429) the worker may meet in any 60 s; more is a violation. */
  max429PerMinute?: number;
  /**
   * The operator campaign (chaos/operator-plan.ts): jobs driven by a seeded sequence of operator actions, judged
   * by chaos/operator-oracle.ts. Its worker kills and server restarts are drawn from the seed.
   */
  operators?: OperatorOptions;
}

export const FULL_CAMPAIGN: CampaignOptions = {
  name: 'full',
  jobProjects: 20,
  jobsPerProject: 10,
  followUpsPerJob: 2,
  exports: 20,
  maxExportRows: 6_000,
  workerKillsAt: [12, 35, 70],
  serverRestartsAt: [50],
  hangs: 6,
  deadlineSeconds: 600,
};

export const QUICK_CAMPAIGN: CampaignOptions = {
  name: 'quick',
  jobProjects: 4,
  jobsPerProject: 5,
  followUpsPerJob: 2,
  exports: 3,
  maxExportRows: 1_500,
  workerKillsAt: [8, 24],
  serverRestartsAt: [16],
  hangs: 1,
  // Below the test's 300 s timeout, so that a workflow still open is reported by name, not as a timeout.
  deadlineSeconds: 200,
};

/**
 * The quick campaign's faults and failures with budgets run dry: 20 analytics requests per 10 s for the key,
 * 10 creates and messages per 10 s per project, 40% of every window taken by another client of the key that
 * ignores Retry-After, and enough export pages (132) to keep the analytics budget dry for minutes. The random 429 faults are left out, so that
 * every 429 is a budget's.
 */
export const EXHAUSTED_CAMPAIGN: CampaignOptions = {
  name: 'exhausted',
  jobProjects: 4,
  jobsPerProject: 5,
  followUpsPerJob: 2,
  exports: 10,
  maxExportRows: 6_000,
  workerKillsAt: [20, 70],
  serverRestartsAt: [45],
  hangs: 1,
  deadlineSeconds: 600,
  budgets: {
    analytics: { requests: 20, windowMs: 10_000 },
    agent: { requests: 10, windowMs: 10_000 },
  },
  foreignShare: 0.4,
  max429PerMinute: 10,
};

/** No jobs of the fault workload and no exports: the operator plan is the whole workload. */
const OPERATOR_STAGE = {
  jobProjects: 0,
  jobsPerProject: 0,
  followUpsPerJob: 0,
  exports: 0,
  maxExportRows: 0,
  hangs: 0,
} as const;

/** 200 jobs over 25 projects, 3 worker kills and 2 server restarts at seeded moments. */
export const OPERATORS_CAMPAIGN: CampaignOptions = {
  name: 'operators',
  ...OPERATOR_STAGE,
  workerKillsAt: [],
  serverRestartsAt: [],
  deadlineSeconds: 1500,
  operators: {
    seed: 1,
    jobs: 200,
    projects: 25,
    startSeconds: 40,
    actionSeconds: 60,
    actionsPerJob: [3, 8],
    workerKills: 3,
    serverRestarts: 2,
    actionTimeoutSeconds: 45,
    settleSeconds: 420,
    cliResetShare: 0.1,
  },
};

/** The test suite's version: 20 jobs, one worker kill and one server restart, about two minutes on a busy machine. */
export const OPERATORS_QUICK_CAMPAIGN: CampaignOptions = {
  name: 'operators-quick',
  ...OPERATOR_STAGE,
  workerKillsAt: [],
  serverRestartsAt: [],
  deadlineSeconds: 300,
  operators: {
    seed: 1,
    jobs: 20,
    projects: 20,
    startSeconds: 6,
    actionSeconds: 16,
    actionsPerJob: [3, 6],
    workerKills: 1,
    serverRestarts: 1,
    actionTimeoutSeconds: 20,
    settleSeconds: 100,
    cliResetShare: 0.2,
  },
};

export const CAMPAIGNS = {
  full: FULL_CAMPAIGN,
  quick: QUICK_CAMPAIGN,
  exhausted: EXHAUSTED_CAMPAIGN,
  operators: OPERATORS_CAMPAIGN,
  'operators-quick': OPERATORS_QUICK_CAMPAIGN,
};
