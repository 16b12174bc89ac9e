import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { z } from 'zod';
import { DEFAULT_RATE_LIMIT, parseRateLimit } from './contract/budget';
import { parseDuration } from './contract/duration';
import { ConfigError } from './contract/errors';
import { EXPORT_COMPRESSIONS, EXPORT_LAYOUTS } from './contract/visitors-export-constants';
import { DEFAULT_TASK_QUEUE } from './contract/names';
import { intFromText, intInRange, portFromText } from './contract/validation';
import { LOG_FORMATS, LOG_LEVELS } from './operations/logging';
import { API_KEY_PATTERN, API_KEY_RULE, ApiKey } from './docs-api/api-key';
import { isS3Uri, parseS3Uri, S3_URI_RULE } from './exports/s3-uri';
import { secretFromEnv } from './codec/keys';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const positiveInt = intFromText(intInRange(1));

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
    .regex(API_KEY_PATTERN, API_KEY_RULE)
    // Wrapped so that printing the config can never reveal the key.
    .transform((key) => new ApiKey(key)),
  DOCS_API_RETRY_UNKNOWN_OUTCOME: booleanFlag.default(false),
  DOCS_API_ANALYTICS_RATE_LIMIT: rateLimit,
  DOCS_API_AGENT_RATE_LIMIT: rateLimit,
  TEMPORAL_TASK_QUEUE: z.string().min(1, 'must not be empty').default(DEFAULT_TASK_QUEUE),
  EXPORT_DIR: z
    .string()
    .min(1, 'must not be empty')
    .default('./exports')
    .refine((value) => !isS3Uri(value) || parseS3Uri(value) !== undefined, S3_URI_RULE)
    // An absolute directory, or `s3://bucket[/prefix]` as given.
    .transform((dir) => (isS3Uri(dir) ? dir : path.resolve(dir))),
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
  WORKER_MAX_CACHED_WORKFLOWS: positiveInt.default(() => defaultMaxCachedWorkflows()),
  WORKER_SHUTDOWN_GRACE_TIME: graceTime,
  WORKER_METRICS_PORT: portFromText.optional(),
  WORKER_HEALTH_PORT: portFromText.optional(),
  LOG_FORMAT: z.enum(LOG_FORMATS, { error: `must be one of ${LOG_FORMATS.join(', ')}` }).default('text'),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  WORKER_WORKFLOW_BUNDLE: z.string().optional(),
  TEMPORAL_DEPLOYMENT_NAME: versionPart
    .refine(
      (name) => !name.includes('.'),
      'must not contain "." (the server names a version <deployment>.<buildId>)',
    )
    .optional(),
  TEMPORAL_WORKER_BUILD_ID: versionPart.optional(),
  /** Stamped by the image build (Dockerfile ARG GIT_SHA): makes `<version>-<sha>` TEMPORAL_WORKER_BUILD_ID's default. */
  DOCS_AGENT_GIT_SHA: z.string().optional(),
});

/** The two variables of a Worker Deployment Version: both or neither. */
const DEPLOYMENT_RULE =
  'TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: set both to join that Worker Deployment Version, or neither to run unversioned';

/** The variables as their schema reads them, and the Worker Deployment Version to join (undefined: unversioned). */
const workerConfigSchema = workerEnvSchema.transform(
  ({ TEMPORAL_DEPLOYMENT_NAME: deploymentName, ...env }, ctx) => {
    const buildId = workerBuildId(deploymentName, env);
    if ((deploymentName === undefined) !== (buildId === undefined)) {
      const missing = deploymentName === undefined ? 'TEMPORAL_DEPLOYMENT_NAME' : 'TEMPORAL_WORKER_BUILD_ID';
      ctx.addIssue({ code: 'custom', path: [missing], message: `is not set. ${DEPLOYMENT_RULE}` });
      return z.NEVER;
    }
    return { ...env, deploymentVersion: deploymentName && buildId ? { deploymentName, buildId } : undefined };
  },
);

export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

/** Parses the worker's environment once at start-up; throws ConfigError listing every bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  // DOCS_API_KEY may come from the file DOCS_API_KEY_FILE names (a Docker or Kubernetes secret).
  let apiKey: ReturnType<typeof secretFromEnv>;
  const lines: string[] = [];
  try {
    apiKey = secretFromEnv(env, 'DOCS_API_KEY');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    lines.push(`  ${error.message}`);
  }
  const keyRefused = lines.length > 0;
  const result = workerConfigSchema.safeParse({ ...env, DOCS_API_KEY: apiKey?.value });
  for (const issue of result.error?.issues ?? []) {
    const name = issue.path.join('.');
    if (name === 'DOCS_API_KEY' && keyRefused) continue;
    lines.push(`  ${name === 'DOCS_API_KEY' && apiKey ? apiKey.source : name}: ${issue.message}`);
  }
  if (!result.success || keyRefused)
    throw new ConfigError(`Invalid worker configuration:\n${lines.join('\n')}`);
  return result.data;
}

/**
 * The build id a worker of `deploymentName` joins: TEMPORAL_WORKER_BUILD_ID, else the image's stamp
 * `<package version>-<git sha>` (DOCS_AGENT_GIT_SHA); undefined outside an image built with GIT_SHA.
 */
export function workerBuildId(
  deploymentName: string | undefined,
  env: { TEMPORAL_WORKER_BUILD_ID?: string | undefined; DOCS_AGENT_GIT_SHA?: string | undefined },
): string | undefined {
  if (env.TEMPORAL_WORKER_BUILD_ID || !deploymentName || !env.DOCS_AGENT_GIT_SHA) {
    return env.TEMPORAL_WORKER_BUILD_ID || undefined;
  }
  return `${packageVersion()}-${env.DOCS_AGENT_GIT_SHA}`;
}

/** The version of this package (src/ and dist/ alike sit one level below its package.json). */
export function packageVersion(): string {
  const manifest = fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
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
