import type { MetricMeter, MetricTags } from '@temporalio/common';
import type { InjectedSinks } from '@temporalio/worker';
import type { Sinks } from '@temporalio/workflow';
import { TERMINAL_JOB_STATUSES } from '../contract/agent-job-constants';
import { EXPORT_FORMATS } from '../contract/visitors-export-constants';
import { DOCS_API_OPERATIONS } from '../docs-api/failures';

// The worker's own Prometheus metrics, served on WORKER_METRICS_PORT beside the SDK's `temporal_*`: one list of
// names, kinds, labels and help, read by the recorders (here, operations/recorders.ts, workflows/metrics.ts),
// the docs and the dashboard and alert tests.

/**
 * Labels, each with a bounded set of values: `project` (the organization's projects this worker serves),
 * `endpoint` (the four operations of the service), `status_class` (`2xx`…`5xx`, `error` for no
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

/** Bucket bounds of the worker's histograms, all in seconds, for the Prometheus exporter (it defaults to ms bounds). */
export function histogramBuckets(): Record<string, number[]> {
  const histograms = Object.values(DocsAgentMetrics).filter((metric) => metric.kind === 'histogram');
  return Object.fromEntries(histograms.map((metric) => [metric.name, [...SECONDS_BUCKETS]]));
}

/**
 * Metrics recorded by workflow code go to the worker's own recorder through a sink (src/workflows/metrics.ts): the
 * workflow's metric meter would add its camelCase `taskQueue` and `workflowType` labels. Sinks are not called while
 * a history is replayed, so each counts once.
 */
export interface MetricsSinks extends Sinks {
  docsAgentMetrics: {
    record(key: DocsAgentMetricKey, value: number, labels: Record<string, string>): void;
  };
}

/** The values a label can take that are known before anything happens: their counters are exported at 0. */
const KNOWN_VALUES: Partial<Record<MetricLabel, readonly string[]>> = {
  endpoint: DOCS_API_OPERATIONS,
  status_class: STATUS_CLASSES,
  status: TERMINAL_JOB_STATUSES,
  format: EXPORT_FORMATS,
};

type Labels = Partial<Record<MetricLabel, string>>;

/**
 * The worker's own metrics (DocsAgentMetrics above) on the SDK's meter: the Runtime's, whose Prometheus exporter
 * serves them beside the SDK's `temporal_*`. Each instrument is made once, at start: making one is a call into the
 * native runtime; recording a value is cheap. record() adds to a counter, records on a histogram, sets a gauge.
 */
export class WorkerMetrics {
  readonly #record = new Map<DocsAgentMetricKey, (value: number, tags: MetricTags) => void>();
  readonly #atZero = new Set<string>();
  /** Each gauge series set, by key and labels. */
  readonly #gauges = new Map<string, { key: DocsAgentMetricKey; labels: Labels }>();

  constructor(meter: MetricMeter) {
    for (const key of Object.keys(DocsAgentMetrics) as DocsAgentMetricKey[]) {
      const { name, kind, help } = DocsAgentMetrics[key];
      if (kind === 'counter') {
        // The exporter appends `_total` to every counter (countersTotalSuffix).
        const counter = meter.createCounter(name.replace(/_total$/, ''), '', help);
        this.#record.set(key, (value, tags) => counter.add(value, tags));
      } else if (kind === 'histogram') {
        const histogram = meter.createHistogram(name, 'float', '', help);
        this.#record.set(key, (value, tags) => histogram.record(value, tags));
      } else {
        const gauge = meter.createGauge(name, 'float', '', help);
        this.#record.set(key, (value, tags) => gauge.set(value, tags));
      }
    }
    this.exportAtZero({});
  }

  record<K extends DocsAgentMetricKey>(key: K, value: number, labels: MetricLabels<K>): void {
    const { project, time_zone } = labels as Labels;
    if (project !== undefined) this.exportAtZero({ project });
    if (project !== undefined && time_zone !== undefined) this.exportAtZero({ project, time_zone });
    this.#record.get(key)?.(value, labels);
    if (DocsAgentMetrics[key].kind === 'gauge')
      this.#gauges.set(key + JSON.stringify(labels), { key, labels });
  }

  /**
   * Exports at 0, once, every counter series that has `labels` and a known value for each of its other labels: a
   * series that first appears at its first increment hides that increment from `increase()`.
   */
  exportAtZero(labels: Labels): void {
    const id = JSON.stringify(labels);
    if (this.#atZero.has(id)) return;
    this.#atZero.add(id);
    for (const key of Object.keys(DocsAgentMetrics) as DocsAgentMetricKey[]) {
      const metric = DocsAgentMetrics[key];
      const names: readonly MetricLabel[] = metric.labels;
      if (metric.kind !== 'counter' || Object.keys(labels).some((l) => !names.includes(l as MetricLabel)))
        continue;
      let series: Labels[] = [{}];
      for (const label of names) {
        const given = labels[label];
        const values = given === undefined ? KNOWN_VALUES[label] : [given];
        series = series.flatMap((s) => (values ?? []).map((value) => ({ ...s, [label]: value })));
      }
      for (const s of series) this.#record.get(key)?.(0, s);
    }
  }

  /**
   * Sets to NaN every series of the gauge whose labels `keep` rejects. The exporter cannot remove a series; NaN
   * compares false, so no rule fires on it, and it is gone from the next process on.
   */
  retain(key: DocsAgentMetricKey, keep: (labels: Labels) => boolean): void {
    for (const [id, gauge] of this.#gauges) {
      if (gauge.key !== key || keep(gauge.labels)) continue;
      this.#record.get(key)?.(NaN, gauge.labels);
      this.#gauges.delete(id);
    }
  }
}

/** The sink the workflow code records its metrics through (src/workflows/metrics.ts), never while replaying. */
export function workflowMetricsSinks(metrics: WorkerMetrics | undefined): InjectedSinks<MetricsSinks> {
  return {
    docsAgentMetrics: {
      record: {
        fn: (_info, key, value, labels) => metrics?.record(key, value, labels as MetricLabels<typeof key>),
        callDuringReplay: false,
      },
    },
  };
}
