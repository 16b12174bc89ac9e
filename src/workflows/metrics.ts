import { proxySinks } from '@temporalio/workflow';
import type { BudgetKind } from '../contract/budget';
import type { DocsAgentMetricKey, MetricLabels, MetricsSinks } from '../operations/metrics';

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

/** A nightly run's end: the exports it made whole (its watermark gauge is read from the run's memo, operations/). */
export function recordNightlyRun(project: string, zone: string, exported: number): void {
  record('nightlyDayExports', exported, { project, time_zone: zone });
}
