import { z } from 'zod';
import { apiDateSchema, checkDateOrder, parseApiDate } from './api-dates';
import { dayStart, isDay } from './zone-days';
import { durationSchema, intInRange, projectIdSchema } from './validation';
import {
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  type ExportFormat,
} from './visitors-export-constants';

export * from './visitors-export-constants';

const visitorCount = intInRange(0);

/** Site-wide unique visitors of a date range (section 2.3 of the service's interface). */
export const visitorTotalsSchema = z.object({ human: visitorCount, ai: visitorCount, total: visitorCount });
export const visitorRowSchema = z.object({
  path: z.string(),
  human: visitorCount,
  ai: visitorCount,
  total: visitorCount,
});
/** One offset page of the visitors operation; every field is used, fields the interface does not list are dropped. */
export const visitorsPageSchema = z.object({
  totals: visitorTotalsSchema,
  visitors: z.array(visitorRowSchema),
  hasMore: z.boolean(),
});

export type VisitorTotals = z.infer<typeof visitorTotalsSchema>;
export type VisitorRow = z.infer<typeof visitorRowSchema>;
export type VisitorsPage = z.infer<typeof visitorsPageSchema>;

export interface VisitorsExportResult {
  projectId: string;
  /** Days of `timeZone` when it is given (then also in the folder name), else the dates as given. */
  dateFrom: string;
  dateTo: string;
  /** The zone whose calendar days dateFrom/dateTo name; absent for UTC. */
  timeZone?: string;
  totals: VisitorTotals;
  rows: number;
  pages: number;
  files: string[];
  warnings: string[];
  /** The range had not ended when it was exported (`partial: true` in the input). */
  partial?: true;
}

/** Content of `manifest.json`, written last beside the export file. */
export interface VisitorsExportManifest {
  projectId: string;
  /** The local days; `requested` is what was sent when they differ (a scheduled day in a zone other than UTC). */
  range: {
    dateFrom: string;
    dateTo: string;
    dateToExclusive: true;
    /** The zone whose days dateFrom/dateTo are; absent for UTC. */
    timeZone?: string;
    requested?: { dateFrom: string; dateTo: string };
  };
  /** The range had not ended when it was exported (`partial: true` in the input): not a whole day. */
  partial?: true;
  file: string;
  format: ExportFormat;
  rows: number;
  pages: number;
  /** sha256 (hex) of the export file's bytes. */
  sha256: string;
  /** Every file of the export but the manifest: its records, bytes, sha256. */
  files: { name: string; rows: number; bytes: number; sha256: string }[];
  totals: VisitorTotals;
  warnings: string[];
  generatedAt: string;
  workflowId: string;
  runId: string;
}

export interface ExportProgress {
  pagesDone: number;
  rowsDone: number;
  inFlight: number;
  done: boolean;
  /** ISO time the analytics budget is expected to let the next page go; absent when no page waits. */
  waitingForBudgetUntil?: string;
  /** EXPORT_DIR of the worker that prepared the export. */
  destination?: string;
}

/** An IANA zone name that this runtime's Intl knows (the workflow sandbox uses the same V8 data). */
export const timeZoneSchema = z
  .string({ error: 'must be a string' })
  .refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Paris"');

const pageSummarySchema = z.object({
  offset: intInRange(0),
  rows: intInRange(0),
  hasMore: z.boolean(),
  totals: visitorTotalsSchema,
  digest: z.string(),
});
export type PageSummary = z.infer<typeof pageSummarySchema>;

/** Plain JSON carried through continue-as-new: counts only, the rows stay staged. */
export const visitorsExportContinuationSchema = z
  .object({
    /** Names the staging area of this export (stable across continue-as-new). */
    exportKey: z.string().min(1),
    dateFrom: apiDateSchema,
    dateTo: apiDateSchema,
    /** What is sent instead of dateFrom/dateTo: a scheduled day in a zone other than UTC, as offset date-times. */
    requestRange: z.object({ dateFrom: apiDateSchema, dateTo: apiDateSchema }).strict().optional(),
    /** Pages counted so far, in offset order: the next run starts at offset pagesDone * pageSize. */
    pagesDone: intInRange(0),
    rowsDone: intInRange(0),
    /** Page 0 as first read: its totals are the export's, the end check compares it with a re-read. */
    first: pageSummarySchema.nullable(),
    /** Pages that disagreed with the others when counted, with why: re-read once the end is reached. */
    suspects: z.array(pageSummarySchema.extend({ reason: z.string() })),
    warnings: z.array(z.string()),
    /** ms since the epoch: a budget wait past this fails the export. */
    deadlineAt: intInRange(0).optional(),
  })
  .strict();

export type VisitorsExportContinuation = z.infer<typeof visitorsExportContinuationSchema>;

const visitorsExportShape = z
  .object({
    projectId: projectIdSchema,
    /** Inclusive start, `YYYY-MM-DD` or ISO 8601. */
    dateFrom: apiDateSchema,
    /** Exclusive end, as in the service: it must have passed (in `timeZone`) unless `partial` is true. */
    dateTo: apiDateSchema,
    pageSize: intInRange(1, MAX_PAGE_SIZE).optional(),
    concurrency: intInRange(1, MAX_CONCURRENCY).optional(),
    format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
    /** IANA zone whose calendar days the dates name (default UTC): then dateFrom/dateTo are days. */
    timeZone: timeZoneSchema.optional(),
    /** Exports a range that has not ended yet, marked partial (never a whole day for the nightly). */
    partial: z.boolean({ error: 'must be true or false' }).optional(),
    /** How long the export may take in all, waits for the analytics budget included (default 24 h). */
    deadline: durationSchema.optional(),
    /** Export events after which the workflow continues as new (default 1,000); tests lower it. */
    continueAsNewAfterEvents: intInRange(100).optional(),
    /** Set by the workflow itself when it continues as new; clients must not pass it. */
    continuation: visitorsExportContinuationSchema.optional(),
  })
  .strict();

export const visitorsExportInputSchema = visitorsExportShape.superRefine((input, ctx) => {
  checkDateOrder(input, ctx);
  checkEnded(input, ctx);
  if (input.timeZone === undefined) return;
  for (const field of ['dateFrom', 'dateTo'] as const) {
    const value = input[field];
    if (value !== undefined && !isDay(value)) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: 'must be a day YYYY-MM-DD when timeZone is given (the day of that zone)',
      });
    }
  }
});

export type VisitorsExportInput = z.infer<typeof visitorsExportInputSchema>;

/** The rule a range that has not ended breaks, named by every entry point that refuses it. */
export const UNENDED_RANGE_RULE =
  "must have passed in the export's zone: a day is exported once it has ended";

/** The instant `dateTo` stands for: midnight of that day in `timeZone` for a day, else the date-time itself. */
export function rangeEnd(input: { dateTo: string; timeZone?: string | undefined }): number | undefined {
  const end = parseApiDate(input.dateTo);
  if (end === undefined || input.timeZone === undefined || !isDay(input.dateTo)) return end;
  return dayStart(input.dateTo, input.timeZone).instant;
}

/** A range whose end has not passed is refused unless `partial` is true (checked against the clock now). */
function checkEnded(input: z.output<typeof visitorsExportShape>, ctx: z.RefinementCtx): void {
  if (input.partial === true || (input.timeZone !== undefined && !isTimeZone(input.timeZone))) return;
  const end = rangeEnd(input);
  if (end !== undefined && end > Date.now()) {
    const message = `${UNENDED_RANGE_RULE} (set partial: true to export it so far)`;
    ctx.addIssue({ code: 'custom', path: ['dateTo'], message });
  }
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
