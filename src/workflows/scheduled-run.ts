import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';

/** Set by the server on every run a schedule starts: the run's nominal time (also for triggers and backfills). */
const ScheduledStartTimeKey = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

const ScheduledByIdKey = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

/** The nominal time of a run a schedule started; undefined for any other run. */
export function scheduledNominalTime(): Date | undefined {
  return workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey);
}

/** The id of the schedule that started this run, when one did (set by the server like the nominal time). */
export function scheduleIdOfRun(): string | undefined {
  return workflowInfo().typedSearchAttributes.get(ScheduledByIdKey);
}
