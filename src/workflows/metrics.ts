import { metricMeter } from '@temporalio/workflow';
import { DocsAgentMetrics } from '../contract/metrics';
import type { BudgetKind } from '../contract/budget';

/**
 * Metrics recorded by workflow code, through the workflow's metric meter: the SDK sends them to the worker's
 * meter (the same Prometheus endpoint) and drops them while a history is replayed, so each counts once.
 */
export function recordPermitWait(kind: BudgetKind, waitedMs: number): void {
  const { name, help } = DocsAgentMetrics.budgetPermitWaitSeconds;
  metricMeter.createHistogram(name, 'float', '', help).record(Math.max(0, waitedMs) / 1000, { kind });
}

/** A follow-up signal the job could not queue (its sender cannot be told: getState lists it as rejected). */
export function recordFollowUpNotAccepted(projectId: string): void {
  const { name, help } = DocsAgentMetrics.followUpsNotAccepted;
  metricMeter.createCounter(name, '', help).add(1, { project: projectId });
}
