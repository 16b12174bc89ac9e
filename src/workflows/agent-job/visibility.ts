import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { AgentJobIdKey, AgentJobStatusKey, DocsProjectIdKey } from '../../contract/names';
import { clockTime } from '../budget/permits';
import { iso, needsPolling, statusOf, type RunState } from './state';

/**
 * Keeps what operators see current: the search attributes DocsProjectId, AgentJobId and AgentJobStatus
 * (upserted only when they change, each upsert is a history event) and the current details (no event).
 */
export function refreshVisibility(state: RunState): void {
  const current = workflowInfo().typedSearchAttributes;
  const wanted: SearchAttributeUpdatePair[] = [
    { key: DocsProjectIdKey, value: state.projectId },
    ...(state.jobId === null ? [] : [{ key: AgentJobIdKey, value: state.jobId }]),
    { key: AgentJobStatusKey, value: statusOf(state) },
  ];
  const changed = wanted.filter((pair) => current.get(pair.key) !== pair.value);
  if (changed.length > 0) upsertSearchAttributes(changed);
  setCurrentDetails(describe(state));
}

function describe(state: RunState): string {
  const counts = state.followUps.countByStatus();
  const nextPoll =
    state.pollingSince !== null
      ? `polling since ${iso(state.pollingSince)} (the poll activity's attempts)`
      : needsPolling(state) && state.nextPollAt !== null
        ? iso(state.nextPollAt)
        : 'none (not polling)';
  const lines = [
    `**Status:** ${statusOf(state)} · **Job:** ${state.jobId ?? 'not created yet'} · **Project:** ${state.projectId}`,
    `**Polls:** ${state.polls} · **Next poll:** ${nextPoll} · **Deadline:** ${iso(state.deadlineAt)}`,
    `**Follow-ups:** ${counts.pending} pending, ${counts.delivered} delivered, ${counts.rejected} rejected, ${counts.outcome_unknown} outcome unknown`,
  ];
  if (state.queuedForBudget) {
    const until = state.budget?.waitingUntil;
    lines.push(
      `**Queued for budget** (the project's creates and messages, in the order asked)` +
        (until == null ? '' : ` until about ${clockTime(until)}`),
    );
  }
  if (state.job?.prLink) lines.push(`**Pull request:** ${state.job.prLink}`);
  if (state.lastError) lines.push(`**Last error:** ${state.lastError}`);
  if (state.continuedRuns > 0) lines.push(`**Run:** ${state.continuedRuns + 1} (continued as new)`);
  return lines.join('\n');
}
