import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection, Runtime, TransportError, Worker, type WorkerOptions } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import {
  toCanonicalString,
  type DataConverter,
  type VersioningBehavior,
  type WorkerDeploymentVersion,
} from '@temporalio/common';
import { createActivities, type Activities } from './activities';
import {
  temporalConnectConfig,
  TemporalUnreachableError,
  type TemporalConnectConfig,
} from './client/connect';
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
  namespace?: string;
  taskQueue: string;
  activities: Activities;
  /** Prebuilt bundle (production, tests); bundled from WORKFLOWS_PATH when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Payload encryption (see dataConverterFromEnv); Temporal's default JSON when absent. */
  dataConverter?: DataConverter;
  /** OpenTelemetry (startTracing); off when absent. */
  tracing?: Tracing;
  /** The worker's own metrics (docs_agent_*), recorded at the activities' edge; off when absent. */
  metrics?: WorkerMetrics;
  /** The Worker Deployment Version to join (TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID); unversioned when absent. */
  deploymentVersion?: WorkerDeploymentVersion;
  tuning?: Pick<
    WorkerOptions,
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxCachedWorkflows'
    | 'shutdownGraceTime'
    | 'identity'
  >;
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
    // A run of export pages heartbeats its progress after each page: one every 250 ms at most reaches the server
    // (by default one per 0.8 x heartbeat timeout), so the pages of a run whose worker died are counted from it
    // and not sent again. Other activities beat every few seconds or less.
    maxHeartbeatThrottleInterval: '250 milliseconds',
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
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
  if (config.workflowBundlePath === BUNDLE_AT_START) return undefined;
  // Run from the TypeScript sources (tsx), a dist/ bundle may be older than the code beside it: bundle instead.
  if (config.workflowBundlePath === undefined && RUNNING_FROM_SOURCES) return undefined;
  const codePath = config.workflowBundlePath ?? (traced ? TRACED_BUNDLE_PATH : DEFAULT_BUNDLE_PATH);
  if (fs.existsSync(codePath)) return { codePath };
  if (config.workflowBundlePath) throw new ConfigError(`WORKER_WORKFLOW_BUNDLE: no file at ${codePath}`);
  return undefined;
}

/**
 * The worker's connection. A server it cannot reach is a TemporalUnreachableError naming the address, where it came
 * from and what to check, not the transport's own error (kept as its cause).
 */
export async function connectWorker(config: TemporalConnectConfig): Promise<NativeConnection> {
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
  const redact = (line: string) => config.docsApiKey.redact(line);
  // Set as the worker comes up; the logger and the health checks read them.
  const started: { worker?: Worker; reachability?: ServerReachability } = {};
  Runtime.install({
    logger: createLogger({
      format: config.logFormat,
      level: config.logLevel,
      redact,
      mute: (entry) => started.reachability?.mutes(entry) ?? false,
    }),
    telemetryOptions: {
      logging: { filter: coreLogFilter(config.logLevel), forward: {} },
      ...(config.metricsPort === undefined
        ? {}
        : {
            metrics: {
              prometheus: {
                bindAddress: `0.0.0.0:${config.metricsPort}`,
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
    config.healthPort === undefined
      ? undefined
      : await startHealthServer(
          config.healthPort,
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
    config.metricsPort === undefined
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
      baseUrl: config.docsApiBaseUrl,
      apiKey: config.docsApiKey,
      onRequestEnd: countDocsApiRequests(metrics),
    }),
    exportDir: config.exportDir,
    exportS3: { forcePathStyle: config.exportS3ForcePathStyle },
    exportLayout: config.exportLayout,
    exportCompression: config.exportCompression,
    retryUnknownOutcome: config.retryUnknownOutcome,
    budgets: {
      analytics: config.analyticsRateLimit,
      agent: config.agentRateLimit,
      organization: config.docsApiKey.fingerprint(),
    },
  };
  const bundle = productionBundle(config, tracing !== undefined);
  const worker = await createWorker({
    connection,
    namespace,
    taskQueue: config.taskQueue,
    activities: createActivities(deps),
    ...(bundle ? { workflowBundle: bundle } : {}),
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { tracing } : {}),
    metrics,
    ...(config.deploymentVersion ? { deploymentVersion: config.deploymentVersion } : {}),
    tuning: {
      maxConcurrentActivityTaskExecutions: config.maxConcurrentActivities,
      maxConcurrentWorkflowTaskExecutions: config.maxConcurrentWorkflowTasks,
      maxCachedWorkflows: config.maxCachedWorkflows,
      shutdownGraceTime: config.shutdownGraceTimeMs,
    },
  });
  Runtime.instance().logger.info('Worker started', {
    taskQueue: config.taskQueue,
    namespace,
    docsApiBaseUrl: config.docsApiBaseUrl,
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
