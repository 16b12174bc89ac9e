import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { z } from 'zod';
import { DEFAULT_RATE_LIMIT, parseRateLimit } from './contract/budget';
import { parseDuration } from './contract/duration';
import { ConfigError } from './contract/errors';
import { EXPORT_COMPRESSIONS, EXPORT_LAYOUTS } from './contract/visitors-export-constants';
import { DEFAULT_TASK_QUEUE } from './contract/names';
import { intFromText, portFromText } from './contract/validation';
import { LOG_FORMATS, LOG_LEVELS } from './operations/logging';
import { API_KEY_PATTERN, API_KEY_RULE, ApiKey } from './docs-api/api-key';
import { isS3Uri, parseS3Uri, S3_URI_RULE } from './exports/s3-uri';
import { secretFromEnv } from './codec/keys';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const positiveInt = intFromText(1);

/** A deployment name or build id: the server joins them as `<name>.<buildId>`, so a name has no dot. */
const versionPart = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .refine((value) => value.trim() === value, 'must not start or end with whitespace');

/** Text that `parse` reads, else an issue naming the rule and what was given. */
function parsedText<T>(fallback: string, parse: (text: string) => T | undefined, rule: string) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const value = parse(text);
      if (value !== undefined) return value;
      ctx.addIssue({ code: 'custom', message: `${rule} (got "${text.slice(0, 40)}")` });
      return z.NEVER;
    });
}

/** `<requests>/<duration>`, e.g. `100/1h` or `20/10s`. */
const rateLimit = parsedText(
  DEFAULT_RATE_LIMIT,
  parseRateLimit,
  `must be <requests>/<duration> with a positive whole number and a positive duration, such as ${DEFAULT_RATE_LIMIT} or 20/10s`,
);

/** A duration in any form the contract takes, as milliseconds; the Go form (`1m30s`) too. */
const graceTime = parsedText(
  '30s',
  parseDuration,
  'must be a duration: milliseconds or a number with a unit, such as 30s, 2m or 1m30s',
);

const workerEnvSchema = z.object({
  DOCS_API_BASE_URL: z.url({
    protocol: /^https?$/,
    error: 'is required: the http(s) base URL of the documentation service',
  }),
  DOCS_API_KEY: z
    .string({ error: 'is required (or DOCS_API_KEY_FILE): the admin key <prefix>_<secret>' })
    .regex(API_KEY_PATTERN, API_KEY_RULE),
  DOCS_API_RETRY_UNKNOWN_OUTCOME: booleanFlag.default(false),
  DOCS_API_ANALYTICS_RATE_LIMIT: rateLimit,
  DOCS_API_AGENT_RATE_LIMIT: rateLimit,
  TEMPORAL_TASK_QUEUE: z.string().min(1, 'must not be empty').default(DEFAULT_TASK_QUEUE),
  EXPORT_DIR: z
    .string()
    .min(1, 'must not be empty')
    .default('./exports')
    .refine((value) => !isS3Uri(value) || parseS3Uri(value) !== undefined, S3_URI_RULE),
  EXPORT_S3_FORCE_PATH_STYLE: booleanFlag.default(false),
  EXPORT_LAYOUT: z
    .enum(EXPORT_LAYOUTS, {
      error: `must be ${EXPORT_LAYOUTS.join(' or ')} (unset: hive for Parquet, default for CSV, NDJSON and JSON)`,
    })
    .optional(),
  EXPORT_COMPRESSION: z
    .enum(EXPORT_COMPRESSIONS, {
      error: `must be ${EXPORT_COMPRESSIONS.join(' or ')} (gzip applies to CSV and NDJSON)`,
    })
    .default('none'),
  WORKER_MAX_CONCURRENT_ACTIVITIES: positiveInt.default(200),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: positiveInt.default(100),
  /** Unset: sized to the heap limit (defaultMaxCachedWorkflows). */
  WORKER_MAX_CACHED_WORKFLOWS: positiveInt.optional(),
  WORKER_SHUTDOWN_GRACE_TIME: graceTime,
  WORKER_METRICS_PORT: portFromText.optional(),
  WORKER_HEALTH_PORT: portFromText.optional(),
  LOG_FORMAT: z.enum(LOG_FORMATS, { error: `must be one of ${LOG_FORMATS.join(', ')}` }).default('text'),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  WORKER_WORKFLOW_BUNDLE: z.string().optional(),
  TEMPORAL_DEPLOYMENT_NAME: versionPart.optional(),
  TEMPORAL_WORKER_BUILD_ID: versionPart.optional(),
  /** Stamped by the image build (Dockerfile ARG GIT_SHA): makes `<version>-<sha>` TEMPORAL_WORKER_BUILD_ID's default. */
  DOCS_AGENT_GIT_SHA: z.string().optional(),
});

/** The two variables of a Worker Deployment Version: both or neither. */
const DEPLOYMENT_RULE =
  'TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: set both to join that Worker Deployment Version, or neither to run unversioned';

export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

/** Parses the worker's environment once at start-up; throws ConfigError listing every bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  // DOCS_API_KEY may come from the file DOCS_API_KEY_FILE names (a Docker or Kubernetes secret).
  let apiKey: { value: string; source: string } | undefined;
  const lines: string[] = [];
  try {
    apiKey = secretFromEnv(env, 'DOCS_API_KEY');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    lines.push(`  ${error.message}`);
  }
  const result = workerEnvSchema.safeParse({ ...env, DOCS_API_KEY: apiKey?.value });
  if (!result.success || lines.length > 0) {
    const keyRefused = lines.length > 0;
    for (const issue of result.error?.issues ?? []) {
      const name = issue.path.join('.');
      if (name === 'DOCS_API_KEY' && keyRefused) continue;
      lines.push(`  ${name === 'DOCS_API_KEY' && apiKey ? apiKey.source : name}: ${issue.message}`);
    }
    throw new ConfigError(`Invalid worker configuration:\n${lines.join('\n')}`);
  }
  const e = result.data;
  const deploymentVersion = deploymentVersionOf(
    e.TEMPORAL_DEPLOYMENT_NAME,
    workerBuildId(e.TEMPORAL_DEPLOYMENT_NAME, e),
  );
  return {
    docsApiBaseUrl: e.DOCS_API_BASE_URL,
    // Wrapped so that printing the config can never reveal the key.
    docsApiKey: new ApiKey(e.DOCS_API_KEY),
    retryUnknownOutcome: e.DOCS_API_RETRY_UNKNOWN_OUTCOME,
    analyticsRateLimit: e.DOCS_API_ANALYTICS_RATE_LIMIT,
    agentRateLimit: e.DOCS_API_AGENT_RATE_LIMIT,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    // An absolute directory, or `s3://bucket[/prefix]` as given.
    exportDir: isS3Uri(e.EXPORT_DIR) ? e.EXPORT_DIR : path.resolve(e.EXPORT_DIR),
    exportS3ForcePathStyle: e.EXPORT_S3_FORCE_PATH_STYLE,
    exportLayout: e.EXPORT_LAYOUT,
    exportCompression: e.EXPORT_COMPRESSION,
    maxConcurrentActivities: e.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTasks: e.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS ?? defaultMaxCachedWorkflows(),
    shutdownGraceTimeMs: e.WORKER_SHUTDOWN_GRACE_TIME,
    metricsPort: e.WORKER_METRICS_PORT,
    healthPort: e.WORKER_HEALTH_PORT,
    logFormat: e.LOG_FORMAT,
    logLevel: e.LOG_LEVEL,
    workflowBundlePath: e.WORKER_WORKFLOW_BUNDLE,
    deploymentVersion,
  };
}

/** The build id a worker of `deploymentName` joins: TEMPORAL_WORKER_BUILD_ID, else the image's stamp. */
export function workerBuildId(
  deploymentName: string | undefined,
  env: { TEMPORAL_WORKER_BUILD_ID?: string | undefined; DOCS_AGENT_GIT_SHA?: string | undefined },
): string | undefined {
  return (
    env.TEMPORAL_WORKER_BUILD_ID || (deploymentName ? stampedBuildId(env.DOCS_AGENT_GIT_SHA) : undefined)
  );
}

/** The image's build: `<package version>-<git sha>`; undefined outside an image built with GIT_SHA. */
function stampedBuildId(gitSha: string | undefined): string | undefined {
  if (!gitSha) return undefined;
  const manifest = fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8');
  return `${(JSON.parse(manifest) as { version: string }).version}-${gitSha}`;
}

function deploymentVersionOf(
  deploymentName: string | undefined,
  buildId: string | undefined,
): WorkerDeploymentVersion | undefined {
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (deploymentName === undefined || buildId === undefined) {
    const missing = deploymentName === undefined ? 'TEMPORAL_DEPLOYMENT_NAME' : 'TEMPORAL_WORKER_BUILD_ID';
    throw new ConfigError(`Invalid worker configuration:\n  ${missing}: is not set. ${DEPLOYMENT_RULE}`);
  }
  if (deploymentName.includes('.')) {
    throw new ConfigError(
      `Invalid worker configuration:\n  TEMPORAL_DEPLOYMENT_NAME: must not contain "." (the server names a version <deployment>.<buildId>)`,
    );
  }
  return { deploymentName, buildId };
}

/** The worker's heap besides the sticky cache: an idle worker process is about 230 MB RSS (docs/benchmarks.md). */
export const WORKER_BASE_HEAP_MIB = 256;
/**
 * Heap budgeted per cached workflow: a cached `agentJob` holds about 0.4 MiB ("Memory per cached workflow"),
 * doubled so the cache takes at most half of the heap beyond the base and the collector has room.
 */
export const MIB_PER_CACHED_WORKFLOW = 0.8;
/**
 * The largest default: with a cache of 500, one worker held 5,000 active jobs at a peak of 800 MB RSS
 * ("Agent jobs at scale"). A larger cache buys nothing at that scale (polls make no workflow task, so an evicted
 * job is replayed only for a follow-up, a status change or its end) and would pass 1 GB.
 */
export const MAX_DEFAULT_CACHED_WORKFLOWS = 500;
/** The SDK's own floor for its default. */
export const MIN_DEFAULT_CACHED_WORKFLOWS = 10;

/**
 * WORKER_MAX_CACHED_WORKFLOWS when unset, sized to the V8 heap limit as the SDK sizes its own default (whose
 * formula assumes about 1.7 MiB per workflow and no upper bound: 2,310 on a 4 GiB heap, more than 1 GB of RSS
 * here). A heap capped small (`--max-old-space-size`, a container's NODE_OPTIONS) gets a smaller cache.
 */
export function defaultMaxCachedWorkflows(heapLimitMiB: number = heapSizeLimitMiB()): number {
  const fits = Math.floor((heapLimitMiB - WORKER_BASE_HEAP_MIB) / MIB_PER_CACHED_WORKFLOW);
  return Math.min(MAX_DEFAULT_CACHED_WORKFLOWS, Math.max(MIN_DEFAULT_CACHED_WORKFLOWS, fits));
}

export function heapSizeLimitMiB(): number {
  return v8.getHeapStatistics().heap_size_limit / 2 ** 20;
}
