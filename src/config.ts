import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from './contract/names';
import { API_KEY_PATTERN, API_KEY_RULE, ApiKey } from './docs-api/api-key';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const positiveInt = z.coerce
  .number({ error: 'must be a number' })
  .int('must be an integer')
  .positive('must be positive');

const workerEnvSchema = z.object({
  DOCS_API_BASE_URL: z.url({
    protocol: /^https?$/,
    error: 'is required: the http(s) base URL of the documentation service',
  }),
  DOCS_API_KEY: z
    .string({ error: 'is required: the admin key <prefix>_<secret>' })
    .regex(API_KEY_PATTERN, API_KEY_RULE),
  DOCS_API_RETRY_UNKNOWN_OUTCOME: booleanFlag.default(false),
  TEMPORAL_TASK_QUEUE: z.string().min(1, 'must not be empty').default(DEFAULT_TASK_QUEUE),
  EXPORT_DIR: z.string().min(1, 'must not be empty').default('./exports'),
  WORKER_MAX_CONCURRENT_ACTIVITIES: positiveInt.default(200),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: positiveInt.default(100),
  WORKER_MAX_CACHED_WORKFLOWS: positiveInt.default(2500),
  WORKER_SHUTDOWN_GRACE_TIME: z.string().min(1).default('30s'),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  WORKER_WORKFLOW_BUNDLE: z.string().optional(),
});

export interface WorkerConfig {
  docsApiBaseUrl: string;
  /** Wrapped so that printing the config can never reveal the key. */
  docsApiKey: ApiKey;
  retryUnknownOutcome: boolean;
  taskQueue: string;
  exportDir: string;
  maxConcurrentActivities: number;
  maxConcurrentWorkflowTasks: number;
  maxCachedWorkflows: number;
  shutdownGraceTime: string;
  metricsPort: number | undefined;
  workflowBundlePath: string | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the worker's environment once at start-up; throws ConfigError listing every bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const result = workerEnvSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid worker configuration:\n${lines.join('\n')}`);
  }
  const e = result.data;
  return {
    docsApiBaseUrl: e.DOCS_API_BASE_URL,
    docsApiKey: new ApiKey(e.DOCS_API_KEY),
    retryUnknownOutcome: e.DOCS_API_RETRY_UNKNOWN_OUTCOME,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    exportDir: path.resolve(e.EXPORT_DIR),
    maxConcurrentActivities: e.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTasks: e.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: e.WORKER_SHUTDOWN_GRACE_TIME,
    metricsPort: e.WORKER_METRICS_PORT,
    workflowBundlePath: e.WORKER_WORKFLOW_BUNDLE,
  };
}
