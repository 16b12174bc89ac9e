import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Activities } from '../activities';
import { AgentJobActivityFailureType, TERMINAL_JOB_STATUSES } from '../contract/agent-job-constants';
import type { RequestEnd } from '../docs-api/client';
import type { WorkerMetrics } from './metrics';

/** What an activity execution tells a recorder: its input, its result or failure, its duration. */
type Recorders = {
  [K in keyof Activities]?: (
    metrics: WorkerMetrics,
    execution: {
      input: Parameters<Activities[K]>[0];
      result?: Awaited<ReturnType<Activities[K]>>;
      error?: unknown;
      seconds: number;
    },
  ) => void;
};

/**
 * What each activity's execution tells: recorded here, at the edge of the activities, so that the activities and
 * the workflows stay about their work. Keyed by the registered names: renaming an activity breaks the typecheck
 * here, not the metrics silently.
 */
const RECORDERS: Recorders = {
  createAgentJob: (metrics, { input, result, error }) => {
    // A create answered from its record (a reset run, a start again under the same id) started nothing.
    if (error === undefined && result?.alreadyCreatedBy === undefined)
      metrics.record('jobsStarted', 1, { project: input.projectId });
  },
  sendAgentJobMessage: (metrics, { input, error }) => {
    if (error === undefined) metrics.record('followUpsDelivered', 1, { project: input.projectId });
  },
  // One read per attempt: answered when the attempt returns or says the job still runs (after reading it).
  pollAgentJob: (metrics, { input, result, error }) => {
    const still =
      error instanceof ApplicationFailure &&
      error.type === AgentJobActivityFailureType.stillRunning &&
      (error.details?.[0] as { read?: boolean } | undefined)?.read !== false;
    if (error !== undefined && !still) return;
    const project = input.projectId;
    metrics.record('jobPolls', 1, { project });
    const status = result?.job.status;
    if (status !== undefined && (TERMINAL_JOB_STATUSES as readonly string[]).includes(status)) {
      metrics.record('jobsEnded', 1, { project, status });
    }
  },
  mergeVisitorsExport: (metrics, { input, result, seconds }) => {
    if (result === undefined) return;
    const labels = { project: input.projectId, format: input.format };
    metrics.record('exportPages', input.pages, labels);
    metrics.record('exportRows', result.rows, labels);
    metrics.record('exportBytes', result.bytes, labels);
    metrics.record('exportMergeSeconds', seconds, { format: input.format });
  },
};

/** The worker's activity interceptor that records the metrics of operations/metrics.ts. */
export function recordActivityMetrics(metrics: WorkerMetrics): ActivityInterceptorsFactory {
  return (ctx) => {
    const recorder = RECORDERS[ctx.info.activityType as keyof Activities] as
      ((metrics: WorkerMetrics, execution: { input: unknown; seconds: number }) => void) | undefined;
    if (recorder === undefined) return {};
    return {
      inbound: {
        async execute(input, next) {
          const startedAt = performance.now();
          const record = (outcome: { result: unknown } | { error: unknown }): void => {
            const seconds = (performance.now() - startedAt) / 1000;
            try {
              recorder(metrics, { input: input.args[0], ...outcome, seconds });
            } catch (error) {
              // A metric is never worth an activity's outcome.
              ctx.log.warn('Metrics not recorded', { error: error instanceof Error ? error.message : error });
            }
          };
          try {
            const result = await next(input);
            record({ result });
            return result;
          } catch (error) {
            record({ error });
            throw error;
          }
        },
      },
    };
  };
}

/**
 * The documentation service's client tells this of every request: counted by endpoint and status class (an
 * answer whose body then fails keeps its status class; `aborted`: the worker's own cancellation, e.g. a
 * prefetched page no longer needed), timed, and every 429 counted.
 */
export function countDocsApiRequests(metrics: WorkerMetrics): (request: RequestEnd) => void {
  return ({ operation: endpoint, status, aborted, seconds }) => {
    const status_class = aborted
      ? 'aborted'
      : status === undefined
        ? 'error'
        : `${Math.floor(status / 100)}xx`;
    metrics.record('serviceRequests', 1, { endpoint, status_class });
    metrics.record('serviceRequestSeconds', seconds, { endpoint });
    if (status === 429) metrics.record('serviceRateLimited', 1, { endpoint });
  };
}
