import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { DataConverter, WorkerDeploymentVersion } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { createActivities, type Activities, type ActivityDeps } from '../src/activities';
import type { RateBudget } from '../src/contract/budget';
import { DEFAULT_TASK_QUEUE } from '../src/contract/names';
import { ApiKey } from '../src/docs-api/api-key';
import { DocsApiClient } from '../src/docs-api/client';
import type { Tracing } from '../src/tracing/setup';
import { createWorker } from '../src/worker';
import { workflowBundle } from './workflow-bundle';

export interface TestWorker {
  worker: Worker;
  docsApi: DocsApiClient;
  /** Shuts the worker down and waits for it, then closes the HTTP client. */
  stop(): Promise<void>;
}

export interface TestWorkerOptions {
  /** Where the documentation service (normally the simulator) listens, and its key. */
  service: { url: string; apiKey: string };
  /** The task queue it polls (default the contract's); a second worker of a test may take its own. */
  taskQueue?: string;
  /** Where exports are written; a fresh temporary directory when absent. */
  exportDir?: string;
  extraDeps?: Partial<ActivityDeps>;
  /**
   * The worker's budgets (DOCS_API_ANALYTICS_RATE_LIMIT, DOCS_API_AGENT_RATE_LIMIT). Default: far above anything
   * a test spends, like the simulator's budgets, which are off unless a test sets them.
   */
  budgets?: { analytics?: RateBudget; agent?: RateBudget };
  tuning?: Parameters<typeof createWorker>[0]['tuning'];
  /** Payload encryption, as the worker's PAYLOAD_CODEC_KEYS would configure it. */
  dataConverter?: DataConverter;
  /** OpenTelemetry, as startTracing configures it from OTEL_*: interceptors and sink. */
  tracing?: Tracing;
  /** The Worker Deployment Version it joins (TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID); unversioned when absent. */
  deploymentVersion?: WorkerDeploymentVersion;
  /**
   * Wraps the real activities, e.g. to hold one until the test lets it go: a workflow task kept open that long
   * is what a loaded worker produces by chance, here on cue.
   */
  wrapActivities?: (activities: Activities) => Activities;
}

const UNBOUNDED_BUDGET: RateBudget = { requests: 1_000_000, windowMs: 3_600_000 };

/** A real worker on the real dev server, with the real activities talking HTTP to the service. */
export async function startTestWorker(
  env: TestWorkflowEnvironment,
  options: TestWorkerOptions,
): Promise<TestWorker> {
  const docsApi = new DocsApiClient({
    baseUrl: options.service.url,
    apiKey: options.service.apiKey,
    timeouts: { connectMs: 2000, headersMs: 5000, bodyMs: 5000 },
  });
  const ownsExportDir = options.exportDir === undefined;
  const exportDir = options.exportDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'docs-exports-')));
  const activities = createActivities({
    docsApi,
    exportDir,
    budgets: {
      analytics: options.budgets?.analytics ?? UNBOUNDED_BUDGET,
      agent: options.budgets?.agent ?? UNBOUNDED_BUDGET,
      organization: new ApiKey(options.service.apiKey).fingerprint(),
    },
    ...options.extraDeps,
  });
  const worker = await createWorker({
    connection: env.nativeConnection,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    activities: options.wrapActivities ? options.wrapActivities(activities) : activities,
    workflowBundle: await workflowBundle({ traced: options.tracing !== undefined }),
    ...(options.tuning ? { tuning: options.tuning } : {}),
    dataConverter: options.dataConverter,
    tracing: options.tracing,
    deploymentVersion: options.deploymentVersion,
  });
  const running = worker.run();
  return {
    worker,
    docsApi,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await docsApi.close();
      if (ownsExportDir) await fs.rm(exportDir, { recursive: true, force: true });
    },
  };
}
