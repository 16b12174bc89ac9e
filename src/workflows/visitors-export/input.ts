import { setHandler, workflowInfo } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { VisitorsExportInput } from '../../contract/visitors-export';
import { getProgressQuery } from '../../contract/messages';
import { invalidInputOf } from '../input-check';
import { invalidInput } from './failures';
import { previousDay, zoneDays, type ScheduledDay } from '../../contract/zone-days';

/** Set by the server on every run a schedule starts: the run's nominal time (also for triggers and backfills). */
const ScheduledStartTimeKey = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

const ScheduledByIdKey = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

/**
 * The input checked by the contract's zod schema, in a local activity (zod stays out of the sandbox); a bad
 * field fails the run (non-retryable InvalidInput) at once.
 */
export async function validateInput(raw: VisitorsExportInput): Promise<VisitorsExportInput> {
  // getProgress is answered while the check runs (a continued run reports what it carries); ProgressReporter
  // takes the query over once the input is valid.
  const carried: Partial<Record<string, unknown>> = isRecord(raw.continuation) ? raw.continuation : {};
  setHandler(getProgressQuery, () => ({
    pagesDone: typeof carried.pagesDone === 'number' ? carried.pagesDone : 0,
    rowsDone: typeof carried.rowsDone === 'number' ? carried.rowsDone : 0,
    inFlight: 0,
    done: false,
  }));
  const refusal = await invalidInputOf('visitorsExport', raw);
  if (refusal !== null) throw invalidInput(refusal.message, refusal.issues);
  return raw;
}

export interface ResolvedRange extends ScheduledDay {
  /** Set when a scheduled run had no timeZone in its input and fell back to UTC. */
  warning?: string;
}

/**
 * The explicit range, or for a scheduled run without dates the calendar day before the schedule's nominal time
 * in the input's `timeZone` (default UTC). A nightly run reads its zone from the input or, without one, from the
 * schedule's spec (planNightlyExport).
 */
export function resolveRange(input: VisitorsExportInput): ResolvedRange {
  if (input.dateFrom !== undefined && input.dateTo !== undefined) {
    // With a zone the dates are days of that zone (the input check made sure they are days).
    return input.timeZone === undefined
      ? { dateFrom: input.dateFrom, dateTo: input.dateTo }
      : zoneDays(input.dateFrom, input.dateTo, input.timeZone);
  }
  const nominal = scheduledNominalTime();
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

/** The nominal time of a run a schedule started; undefined for any other run. */
export function scheduledNominalTime(): Date | undefined {
  return workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey);
}

/** The id of the schedule that started this run, when one did (set by the server like the nominal time). */
export function scheduleIdOfRun(): string | undefined {
  return workflowInfo().typedSearchAttributes.get(ScheduledByIdKey);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
