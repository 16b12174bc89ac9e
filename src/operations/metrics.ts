import type { MetricMeter, MetricTags } from '@temporalio/common';
import type { InjectedSinks } from '@temporalio/worker';
import { TERMINAL_JOB_STATUSES } from '../contract/agent-job-constants';
import {
  DocsAgentMetrics,
  STATUS_CLASSES,
  type DocsAgentMetricKey,
  type MetricLabel,
  type MetricLabels,
} from '../contract/metrics';
import { EXPORT_FORMATS } from '../contract/visitors-export-constants';
import type { MetricsSinks } from '../workflows/metrics';
import { ENDPOINT_NAMES } from './docs-api-metrics';

/** The values a label can take that are known before anything happens: their counters are exported at 0. */
const KNOWN_VALUES: Partial<Record<MetricLabel, readonly string[]>> = {
  endpoint: ENDPOINT_NAMES,
  status_class: STATUS_CLASSES,
  status: TERMINAL_JOB_STATUSES,
  format: EXPORT_FORMATS,
};

type Labels = Partial<Record<MetricLabel, string>>;

/**
 * The worker's own metrics (src/contract/metrics.ts) on the SDK's meter: the Runtime's, whose Prometheus exporter
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
