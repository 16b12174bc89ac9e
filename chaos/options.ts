/** The size and timing of one fault campaign. */
export interface CampaignOptions {
  name: 'full' | 'quick';
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
  serverRestartAt: number;
  /** Requests that hang (until the client's 30 s timeout): a handful, each costs half a minute. */
  hangs: number;
  /** Every workflow must be closed this long after the first start. */
  deadlineSeconds: number;
}

export const FULL_CAMPAIGN: CampaignOptions = {
  name: 'full',
  jobProjects: 20,
  jobsPerProject: 10,
  followUpsPerJob: 2,
  exports: 20,
  maxExportRows: 6_000,
  workerKillsAt: [12, 35, 70],
  serverRestartAt: 50,
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
  serverRestartAt: 16,
  hangs: 1,
  deadlineSeconds: 240,
};
