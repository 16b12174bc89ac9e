import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { DocsAgentMetricKey, MetricLabels } from '../contract/metrics';
import type { BudgetKind } from '../contract/budget';

/**
 * Metrics recorded by workflow code go to the worker's own recorder through a sink: the workflow's metric meter
 * would add its camelCase `taskQueue` and `workflowType` labels. Sinks are not called while a history is
 * replayed, so each counts once.
 */
export interface MetricsSinks extends Sinks {
  docsAgentMetrics: {
    record(key: DocsAgentMetricKey, value: number, labels: Record<string, string>): void;
  };
}

const { docsAgentMetrics } = proxySinks<MetricsSinks>();

function record<K extends DocsAgentMetricKey>(key: K, value: number, labels: MetricLabels<K>): void {
  docsAgentMetrics.record(key, value, labels);
}

export function recordPermitWait(kind: BudgetKind, waitedMs: number): void {
  record('budgetPermitWaitSeconds', Math.max(0, waitedMs) / 1000, { kind });
}

/** A follow-up signal the job could not queue (its sender cannot be told: getState lists it as rejected). */
export function recordFollowUpNotAccepted(projectId: string): void {
  record('followUpsNotAccepted', 1, { project: projectId });
}

/** A nightly run's end: the exports it made whole, and the end of the first span held whole (ms), if any. */
export function recordNightlyRun(
  project: string,
  zone: string,
  exported: number,
  wholeThroughMs?: number,
): void {
  const labels = { project, time_zone: zone };
  record('nightlyDayExports', exported, labels);
  if (wholeThroughMs !== undefined) record('nightlyWatermarkSeconds', wholeThroughMs / 1000, labels);
}
