import { setHandler } from '@temporalio/workflow';
import type { VisitorsExportInput } from '../../contract/visitors-export';
import { getProgressQuery } from '../../contract/messages';
import { invalidInputOf } from '../input-check';
import { invalidInput } from './failures';
import { zoneDays, type ScheduledDay } from '../../contract/zone-days';

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
  warning?: string;
}

/** The range to export: with a zone the dates are days of that zone (the input check made sure they are days). */
export function resolveRange(input: VisitorsExportInput): ResolvedRange {
  return input.timeZone === undefined
    ? { dateFrom: input.dateFrom, dateTo: input.dateTo }
    : zoneDays(input.dateFrom, input.dateTo, input.timeZone);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
