import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';

/**
 * A meter that keeps what is recorded, by series as the Prometheus exporter names it (counters get `_total`):
 * `name{tags}` → the last value of a gauge, the sum of a counter.
 */
export function recordingMeter(): { meter: MetricMeter; values: Map<string, number> } {
  const values = new Map<string, number>();
  const key = (name: string, tags: MetricTags) => `${name}${JSON.stringify(tags)}`;
  const meter: MetricMeter = {
    withTags: () => meter,
    createCounter: (name) => ({
      ...noopMetricMeter.createCounter(name),
      add: (value, tags = {}) => {
        const series = key(`${name}_total`, tags);
        values.set(series, (values.get(series) ?? 0) + value);
      },
    }),
    createGauge: (name) => ({
      ...noopMetricMeter.createGauge(name),
      set: (value, tags = {}) => values.set(key(name, tags), value),
    }),
    createHistogram: (name) => noopMetricMeter.createHistogram(name),
  };
  return { meter, values };
}

/** The key of a series in recordingMeter's values. */
export function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}${JSON.stringify(labels)}`;
}
