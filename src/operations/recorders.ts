import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Dispatcher } from 'undici';
import type { Activities } from '../activities';
import type { AgentJobAnswer } from '../activities/agent-job';
import { AgentJobActivityFailureType, TERMINAL_JOB_STATUSES } from '../contract/agent-job-constants';
import { observingInterceptor } from '../docs-api/client';
import { endpointOf, statusClass, type WorkerMetrics } from './metrics';

/** What an activity execution gives a recorder: its input, its result or failure, its duration. */
interface Execution {
  input: unknown;
  result?: unknown;
  error?: unknown;
  seconds: number;
}

type Recorder = (metrics: WorkerMetrics, execution: Execution) => void;

interface JobAnswer {
  status?: unknown;
}

/**
 * What each activity's execution tells: recorded here, at the edge of the activities, so that the activities and
 * the workflows stay about their work. Keyed by the registered names: renaming an activity breaks the typecheck
 * here, not the metrics silently.
 */
const RECORDERS: Partial<Record<keyof Activities, Recorder>> = {
  createAgentJob: (metrics, { input, result, error }) => {
    // A create answered from its record (a reset run, a start again under the same id) started nothing.
    const earlier = (result as AgentJobAnswer | undefined)?.alreadyCreatedBy;
    if (error === undefined && earlier === undefined)
      metrics.record('jobsStarted', 1, { project: projectOf(input) });
  },
  sendAgentJobMessage: (metrics, { input, error }) => {
    if (error === undefined) metrics.record('followUpsDelivered', 1, { project: projectOf(input) });
  },
  // One read per attempt: answered when the attempt returns or says the job still runs (after reading it).
  pollAgentJob: (metrics, execution) => {
    const still =
      execution.error instanceof ApplicationFailure &&
      execution.error.type === AgentJobActivityFailureType.stillRunning &&
      (execution.error.details?.[0] as { read?: boolean } | undefined)?.read !== false;
    if (execution.error !== undefined && !still) return;
    recordPoll(
      metrics,
      projectOf(execution.input),
      (execution.result as { job?: JobAnswer } | undefined)?.job,
    );
  },
  mergeVisitorsExport: (metrics, { input, result, error, seconds }) => {
    if (error !== undefined) return;
    const request = input as { projectId: string; format: string; pages: number };
    const merged = result as { rows: number; bytes?: number };
    const labels = { project: request.projectId, format: request.format };
    metrics.record('exportPages', request.pages, labels);
    metrics.record('exportRows', merged.rows, labels);
    if (merged.bytes !== undefined) metrics.record('exportBytes', merged.bytes, labels);
    metrics.record('exportMergeSeconds', seconds, { format: request.format });
  },
};

function projectOf(input: unknown): string {
  const projectId = (input as { projectId?: unknown } | undefined)?.projectId;
  return typeof projectId === 'string' ? projectId : 'unknown';
}

function recordPoll(metrics: WorkerMetrics, project: string, job: JobAnswer | undefined): void {
  metrics.record('jobPolls', 1, { project });
  const status = job?.status;
  if (typeof status === 'string' && (TERMINAL_JOB_STATUSES as readonly string[]).includes(status)) {
    metrics.record('jobsEnded', 1, { project, status });
  }
}

/** The worker's activity interceptor that records the metrics of operations/metrics.ts. */
export function recordActivityMetrics(metrics: WorkerMetrics): ActivityInterceptorsFactory {
  return (ctx) => {
    const recorder = RECORDERS[ctx.info.activityType as keyof Activities];
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
 * An undici interceptor on the documentation service's client: every request counted by endpoint and status
 * class (an answer whose body then fails keeps its status class), timed, and every 429 counted. The HTTP layer
 * is the one place every request passes, whichever activity (or workflow version) sends it.
 */
export function countDocsApiRequests(metrics: WorkerMetrics): Dispatcher.DispatcherComposeInterceptor {
  return observingInterceptor((options) => {
    const endpoint = endpointOf(options.method, options.path ?? '/');
    const startedAt = performance.now();
    let statusCode: number | undefined;
    return {
      onStatus: (code) => {
        statusCode = code;
      },
      onEnd: (error) => {
        const status_class = error !== undefined && isAbort(error) ? 'aborted' : statusClass(statusCode);
        metrics.record('serviceRequests', 1, { endpoint, status_class });
        metrics.record('serviceRequestSeconds', (performance.now() - startedAt) / 1000, { endpoint });
        if (statusCode === 429) metrics.record('serviceRateLimited', 1, { endpoint });
      },
    };
  });
}

/** The worker's own cancellation (an activity cancelled, a prefetched page no longer needed): not the service's. */
function isAbort(error: Error): boolean {
  return error.name === 'AbortError' || (error as { code?: unknown }).code === 'UND_ERR_ABORTED';
}
