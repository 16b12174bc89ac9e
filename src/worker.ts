import fs from 'node:fs';
import path from 'node:path';
import {
  NativeConnection,
  Runtime,
  TransportError,
  Worker,
  type BundleOptions,
  type WorkerOptions,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import {
  toCanonicalString,
  type DataConverter,
  type VersioningBehavior,
  type WorkerDeploymentVersion,
} from '@temporalio/common';
import { createActivities, type Activities } from './activities';
import { temporalConnectConfig, TemporalUnreachableError } from './client/connect';
import { ConfigError } from './contract/errors';
import { loadWorkerConfig, type WorkerConfig } from './config';
import { DocsApiClient } from './docs-api/client';
import { dataConverterFromEnv } from './codec/aes-gcm-codec';
import { createDocsAgentNexusHandler } from './nexus/docs-agent-service';
import { ServerReachability, startHealthServer } from './operations/health';
import { countDocsApiRequests, recordActivityMetrics } from './operations/recorders';
import { histogramBuckets, WorkerMetrics, workflowMetricsSinks } from './operations/metrics';
import { watchNightlyWatermarks } from './operations/nightly-watermarks';
import { coreLogFilter, createLogger, logStartFailure } from './operations/logging';
import { DROPPED_WORKFLOW_SPANS, startTracing, type Tracing } from './tracing/setup';

/** Source of the workflow code: a prebuilt bundle in production, the TypeScript sources in development. */
export const WORKFLOWS_PATH = require.resolve('./workflows');
/**
 * Workflow interceptors of a traced worker (OTEL_* set), active only in runs whose start carried a trace. They
 * live in a bundle of their own: OpenTelemetry's modules would be evaluated in every cached workflow's sandbox,
 * so the untraced bundle, the default, stays the SDK floor plus this project's workflow code.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('./workflows/tracing-interceptors')];
/**
 * How every workflow bundle is built (prebuilt, at start, in tests): with webpack's module concatenation, this
 * project's modules become one. The sandbox evaluates a bundle's modules again for every cached workflow, so each
 * module kept its own record and a getter per export in each: 28 KiB of retained heap per cached `agentJob`.
 */
export const WORKFLOW_BUNDLER_OPTIONS: Pick<BundleOptions, 'webpackConfigHook'> = {
  webpackConfigHook: (config) => ({
    ...config,
    optimization: { ...config.optimization, concatenateModules: true, usedExports: true },
  }),
};
export const DEFAULT_BUNDLE_PATH = path.resolve(__dirname, '../dist/workflow-bundle.js');
/** The prebuilt bundle with the tracing interceptors, loaded when tracing is on. */
export const TRACED_BUNDLE_PATH = path.resolve(__dirname, '../dist/workflow-bundle-traced.js');
/** WORKER_WORKFLOW_BUNDLE value that bundles the sources at start even when a prebuilt bundle exists. */
export const BUNDLE_AT_START = 'off';
/**
 * Every workflow type's behaviour on a versioned worker (docs/upgrading.md says why for each): a run finishes on
 * the code that started it, so a change needs no patch. The budget limiter moves at continue-as-new.
 */
export const VERSIONING_BEHAVIOR = 'PINNED' satisfies VersioningBehavior;
const RUNNING_FROM_SOURCES = __filename.endsWith('.ts');

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace?: string | undefined;
  taskQueue: string;
  activities: Activities;
  /** Prebuilt bundle (production, tests); bundled from WORKFLOWS_PATH when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'] | undefined;
  /** Payload encryption (see dataConverterFromEnv); Temporal's default JSON when absent. */
  dataConverter?: DataConverter | undefined;
  /** OpenTelemetry (startTracing); off when absent. */
  tracing?: Tracing | undefined;
  /** The worker's own metrics (docs_agent_*), recorded at the activities' edge; off when absent. */
  metrics?: WorkerMetrics | undefined;
  /** The Worker Deployment Version to join (TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID); unversioned when absent. */
  deploymentVersion?: WorkerDeploymentVersion | undefined;
  /** Options read from the configuration: concurrency, the sticky cache, the shutdown grace time. */
  tuning?: Partial<WorkerOptions>;
}

/** The one place a Worker is assembled, shared by the production entry point and the tests. */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities: options.activities,
    // The Nexus service `docs-agent`: callers in other namespaces start the same workflows through an endpoint.
    nexusServices: [createDocsAgentNexusHandler(options.taskQueue)],
    // A run of export pages heartbeats its progress after each chunk of pages and every few seconds: one every
    // 250 ms at most reaches the server (by default one per 0.8 x heartbeat timeout), so the pages of a run whose
    // worker died are counted from it and not sent again. Other activities beat every few seconds or less.
    maxHeartbeatThrottleInterval: '250 milliseconds',
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: WORKFLOW_BUNDLER_OPTIONS }),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    // Traced: the traced bundle has the workflow interceptors baked in; workflowModules serves bundling at start.
    interceptors: {
      ...(options.tracing
        ? { ...options.tracing.worker.interceptors, workflowModules: WORKFLOW_INTERCEPTOR_MODULES }
        : {}),
      activity: [
        ...(options.tracing?.worker.interceptors.activity ?? []),
        ...(options.metrics ? [recordActivityMetrics(options.metrics)] : []),
      ],
    },
    sinks: {
      ...(options.tracing ? options.tracing.worker.sinks : DROPPED_WORKFLOW_SPANS),
      ...workflowMetricsSinks(options.metrics),
    },
    ...(options.deploymentVersion
      ? {
          workerDeploymentOptions: {
            version: options.deploymentVersion,
            useWorkerVersioning: true,
            defaultVersioningBehavior: VERSIONING_BEHAVIOR,
          },
        }
      : {}),
    ...options.tuning,
  });
}

function productionBundle(
  config: WorkerConfig,
  traced: boolean,
): WorkerOptions['workflowBundle'] | undefined {
  const given = config.WORKER_WORKFLOW_BUNDLE;
  if (given === BUNDLE_AT_START) return undefined;
  // Run from the TypeScript sources (tsx), a dist/ bundle may be older than the code beside it: bundle instead.
  if (given === undefined && RUNNING_FROM_SOURCES) return undefined;
  const codePath = given ?? (traced ? TRACED_BUNDLE_PATH : DEFAULT_BUNDLE_PATH);
  if (fs.existsSync(codePath)) return { codePath };
  if (given) throw new ConfigError(`WORKER_WORKFLOW_BUNDLE: no file at ${codePath}`);
  return undefined;
}

/**
 * The worker's connection. A server it cannot reach is a TemporalUnreachableError naming the address, where it came
 * from and what to check, not the transport's own error (kept as its cause).
 */
export async function connectWorker(
  config: ReturnType<typeof temporalConnectConfig>,
): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(config.connectionOptions);
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    throw new TemporalUnreachableError(config.address, config.addressSource, { cause: error });
  }
}

/** Production entry point: configuration from the environment, graceful shutdown on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const dataConverter = dataConverterFromEnv();
  const redact = (line: string) => config.DOCS_API_KEY.redact(line);
  // Set as the worker comes up; the logger and the health checks read them.
  const started: { worker?: Worker; reachability?: ServerReachability } = {};
  Runtime.install({
    logger: createLogger({
      format: config.LOG_FORMAT,
      level: config.LOG_LEVEL,
      redact,
      mute: (entry) => started.reachability?.mutes(entry) ?? false,
    }),
    telemetryOptions: {
      logging: { filter: coreLogFilter(config.LOG_LEVEL), forward: {} },
      ...(config.WORKER_METRICS_PORT === undefined
        ? {}
        : {
            metrics: {
              prometheus: {
                bindAddress: `0.0.0.0:${config.WORKER_METRICS_PORT}`,
                histogramBucketOverrides: histogramBuckets(),
                // Prometheus's conventions (promtool check metrics): counters end in _total, durations in seconds.
                countersTotalSuffix: true,
                useSecondsForDurations: true,
              },
            },
          }),
    },
  });
  // Up before the connection: /livez answers and /readyz says 503 while the worker starts.
  const health =
    config.WORKER_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(
          config.WORKER_HEALTH_PORT,
          () => started.worker?.getState(),
          () => started.reachability?.probe() ?? { ok: false, reason: 'connecting to the server' },
        );
  const temporal = temporalConnectConfig();
  const namespace = temporal.namespace;
  const connection = await connectWorker(temporal);
  started.reachability = new ServerReachability(
    async (deadline) => {
      await connection.withDeadline(deadline, () => connection.workflowService.getSystemInfo({}));
    },
    temporal.address,
    Runtime.instance().logger,
  );
  started.reachability.start();
  const tracing = await startTracing('docs-agent-worker');
  // The SDK's meter: a no-op without WORKER_METRICS_PORT.
  const metrics = new WorkerMetrics(Runtime.instance().metricMeter);
  const nightlyWatermarks =
    config.WORKER_METRICS_PORT === undefined
      ? undefined
      : watchNightlyWatermarks(
          new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) }),
          metrics,
          (error) => {
            Runtime.instance().logger.warn('Nightly watermarks not read', {
              error: error instanceof Error ? error.message : String(error),
            });
          },
        );
  const deps = {
    docsApi: new DocsApiClient({
      baseUrl: config.DOCS_API_BASE_URL,
      apiKey: config.DOCS_API_KEY,
      onRequestEnd: countDocsApiRequests(metrics),
    }),
    exportDir: config.EXPORT_DIR,
    exportS3: { forcePathStyle: config.EXPORT_S3_FORCE_PATH_STYLE },
    exportLayout: config.EXPORT_LAYOUT,
    exportCompression: config.EXPORT_COMPRESSION,
    retryUnknownOutcome: config.DOCS_API_RETRY_UNKNOWN_OUTCOME,
    budgets: {
      analytics: config.DOCS_API_ANALYTICS_RATE_LIMIT,
      agent: config.DOCS_API_AGENT_RATE_LIMIT,
      organization: config.DOCS_API_KEY.fingerprint(),
    },
  };
  const bundle = productionBundle(config, tracing !== undefined);
  const worker = await createWorker({
    connection,
    namespace,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    activities: createActivities(deps),
    workflowBundle: bundle,
    dataConverter,
    tracing,
    metrics,
    deploymentVersion: config.deploymentVersion,
    tuning: {
      maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
      shutdownGraceTime: config.WORKER_SHUTDOWN_GRACE_TIME,
    },
  });
  Runtime.instance().logger.info('Worker started', {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    namespace,
    docsApiBaseUrl: config.DOCS_API_BASE_URL,
    workflowBundle: bundle ? 'prebuilt' : 'bundled at start',
    payloadEncryption: dataConverter ? 'AES-256-GCM' : 'off',
    tracing: tracing ? 'OpenTelemetry (OTEL_* environment)' : 'off',
    workerVersioning: config.deploymentVersion ? toCanonicalString(config.deploymentVersion) : 'unversioned',
  });
  started.worker = worker;
  try {
    await worker.run();
  } finally {
    started.reachability?.stop();
    nightlyWatermarks?.stop();
    await health?.close();
    await deps.docsApi.close();
    await connection.close();
    await tracing?.shutdown();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    logStartFailure(error);
    process.exit(1);
  });
}
