import { workflowInfo } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { InputValidationError, parseOrThrow } from '../../contract/validation';
import { visitorsExportInputSchema, type VisitorsExportInput } from '../../contract/visitors-export';
import { invalidInput } from './failures';
import { previousDay, type ScheduledDay } from './scheduled-range';

/** Set by the server on every run a schedule starts: the run's nominal time (also for triggers and backfills). */
const ScheduledStartTimeKey = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

/** The input checked by the contract's schema; a bad field fails the run (non-retryable InvalidInput) at once. */
export function validateInput(raw: unknown): VisitorsExportInput {
  try {
    return parseOrThrow(visitorsExportInputSchema, raw, 'visitorsExport input');
  } catch (error) {
    if (error instanceof InputValidationError) throw invalidInput(error.message, error.issues);
    throw error;
  }
}

export interface ResolvedRange extends ScheduledDay {
  /** Set when a scheduled run had no timeZone in its input and fell back to UTC. */
  warning?: string;
}

/**
 * The explicit range, or for a scheduled run without dates the calendar day before the schedule's nominal time
 * in `timeZone`. The workflow cannot read a schedule's zone, so the schedule's input carries it (default UTC).
 */
export function resolveRange(input: VisitorsExportInput): ResolvedRange {
  if (input.dateFrom !== undefined && input.dateTo !== undefined) {
    return { dateFrom: input.dateFrom, dateTo: input.dateTo };
  }
  const nominal = workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey);
  if (nominal === undefined) {
    throw invalidInput(
      'Invalid visitorsExport input: dateFrom, dateTo: are required unless the run is started by a schedule',
    );
  }
  const range = previousDay(nominal, input.timeZone ?? 'UTC');
  if (input.timeZone !== undefined) return range;
  return {
    ...range,
    warning: `scheduled run without timeZone in its input: the previous day of ${nominal.toISOString()} was taken in UTC`,
  };
}
