import type { MetricMeter, MetricTags } from '@temporalio/common';
import { DocsAgentMetrics, type DocsAgentMetricKey } from '../contract/metrics';

export type MetricLabels<K extends DocsAgentMetricKey> = Record<
  (typeof DocsAgentMetrics)[K]['labels'][number],
  string
>;

/**
 * The worker's own metrics (src/contract/metrics.ts) on the SDK's meter: the Runtime's, whose Prometheus exporter
 * serves them beside the SDK's `temporal_*`. Each instrument is made once, at start: making one is a call into the
 * native runtime; recording a value is cheap. record() adds to a counter, records on a histogram, sets a gauge.
 */
export class WorkerMetrics {
  readonly #record = new Map<DocsAgentMetricKey, (value: number, tags: MetricTags) => void>();

  constructor(meter: MetricMeter) {
    for (const key of Object.keys(DocsAgentMetrics) as DocsAgentMetricKey[]) {
      const { name, kind, help } = DocsAgentMetrics[key];
      if (kind === 'counter') {
        const counter = meter.createCounter(name, '', help);
        this.#record.set(key, (value, tags) => counter.add(value, tags));
      } else if (kind === 'histogram') {
        const histogram = meter.createHistogram(name, 'float', '', help);
        this.#record.set(key, (value, tags) => histogram.record(value, tags));
      } else {
        const gauge = meter.createGauge(name, 'float', '', help);
        this.#record.set(key, (value, tags) => gauge.set(value, tags));
      }
    }
  }

  record<K extends DocsAgentMetricKey>(key: K, value: number, labels: MetricLabels<K>): void {
    this.#record.get(key)?.(value, labels);
  }
}
