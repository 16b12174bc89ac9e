// The worker's own Prometheus metrics, served on WORKER_METRICS_PORT beside the SDK's `temporal_*`: one list of
// names, kinds, labels and help, read by the recorders (src/operations/metrics.ts, src/workflows/metrics.ts),
// the docs and the dashboard and alert tests. Imported by workflow code: no imports here.

/**
 * Labels, each with a bounded set of values: `project` (the organization's projects this worker serves),
 * `endpoint` (the four operations of the service, or `other`), `status_class` (`2xx`…`5xx`, `error` for no
 * answer, `aborted` when the worker cancelled it), `status` (a job's terminal status), `kind` (`analytics`, `agent`), `format` (the export formats),
 * `time_zone` (the zones of the nightly schedules). No label holds an id of a job, a run or a request.
 */
export type MetricLabel =
  'project' | 'endpoint' | 'status_class' | 'status' | 'kind' | 'format' | 'time_zone';

export interface MetricDefinition {
  name: string;
  kind: 'counter' | 'histogram' | 'gauge';
  labels: readonly MetricLabel[];
  help: string;
  /** Histograms: bucket bounds, in the unit of the name. */
  buckets?: readonly number[];
}

const SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600] as const;

export const DocsAgentMetrics = {
  jobsStarted: {
    name: 'docs_agent_jobs_started_total',
    kind: 'counter',
    labels: ['project'],
    help: 'Agent jobs created at the service',
  },
  jobsEnded: {
    name: 'docs_agent_jobs_ended_total',
    kind: 'counter',
    labels: ['project', 'status'],
    help: 'Agent jobs seen in a terminal status (completed, archived, failed)',
  },
  followUpsDelivered: {
    name: 'docs_agent_follow_ups_delivered_total',
    kind: 'counter',
    labels: ['project'],
    help: 'Follow-up messages the service accepted',
  },
  followUpsNotAccepted: {
    name: 'docs_agent_follow_ups_not_accepted_total',
    kind: 'counter',
    labels: ['project'],
    help: 'Follow-up signals a job could not queue (queue full, job failed or archived, invalid): never sent',
  },
  jobPolls: {
    name: 'docs_agent_job_polls_total',
    kind: 'counter',
    labels: ['project'],
    help: 'Reads of a running job the service answered',
  },
  serviceRequests: {
    name: 'docs_agent_service_requests_total',
    kind: 'counter',
    labels: ['endpoint', 'status_class'],
    help: 'Requests to the documentation service, by endpoint and status class (error: no answer; aborted: cancelled by the worker)',
  },
  serviceRequestSeconds: {
    name: 'docs_agent_service_request_seconds',
    kind: 'histogram',
    labels: ['endpoint'],
    help: 'Time from sending a request to the end of its answer',
    buckets: SECONDS_BUCKETS,
  },
  serviceRateLimited: {
    name: 'docs_agent_service_rate_limited_total',
    kind: 'counter',
    labels: ['endpoint'],
    help: 'Answers 429 Too Many Requests from the service',
  },
  budgetPermitWaitSeconds: {
    name: 'docs_agent_budget_permit_wait_seconds',
    kind: 'histogram',
    labels: ['kind'],
    help: 'Time a workflow waited for a permit of the shared budgets before a request',
    buckets: SECONDS_BUCKETS,
  },
  exportPages: {
    name: 'docs_agent_export_pages_total',
    kind: 'counter',
    labels: ['project', 'format'],
    help: 'Pages merged into completed exports',
  },
  exportRows: {
    name: 'docs_agent_export_rows_total',
    kind: 'counter',
    labels: ['project', 'format'],
    help: 'Rows written to completed exports',
  },
  exportBytes: {
    name: 'docs_agent_export_bytes_total',
    kind: 'counter',
    labels: ['project', 'format'],
    help: 'Bytes of the export files written',
  },
  exportMergeSeconds: {
    name: 'docs_agent_export_merge_seconds',
    kind: 'histogram',
    labels: ['format'],
    help: 'Time the merge of an export took (staged pages to the export file and manifest)',
    buckets: SECONDS_BUCKETS,
  },
  nightlyDayExports: {
    name: 'docs_agent_nightly_day_exports_total',
    kind: 'counter',
    labels: ['project', 'time_zone'],
    help: 'Days (and ranges between zones) exported whole by the nightly exports',
  },
  nightlyWatermarkSeconds: {
    name: 'docs_agent_nightly_watermark_seconds',
    kind: 'gauge',
    labels: ['project', 'time_zone'],
    help: 'End of the first span of instants the destination holds whole in the nightly look-back (Unix seconds), from the latest run of each nightly schedule: alert on its age',
  },
} as const satisfies Record<string, MetricDefinition>;

export type DocsAgentMetricKey = keyof typeof DocsAgentMetrics;

/** The labels of a metric, each with its value. */
export type MetricLabels<K extends DocsAgentMetricKey> = Record<
  (typeof DocsAgentMetrics)[K]['labels'][number],
  string
>;

/** Every value of `status_class` but the 1xx no request gets as its final answer. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'error', 'aborted'] as const;

/** Bucket bounds of the worker's histograms, for the Prometheus exporter (it defaults to millisecond bounds). */
export function histogramBuckets(): Record<string, number[]> {
  const buckets: Record<string, number[]> = {};
  for (const metric of Object.values(DocsAgentMetrics) as MetricDefinition[]) {
    if (metric.buckets) buckets[metric.name] = [...metric.buckets];
  }
  return buckets;
}

/** `2xx`…`5xx` for an answer; `error` for none (a timeout, a reset). */
export function statusClass(statusCode: number | undefined): string {
  return statusCode === undefined ? 'error' : `${Math.floor(statusCode / 100)}xx`;
}
