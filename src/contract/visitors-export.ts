import { z } from 'zod';
import { apiDateSchema, intInRange, parseApiDate, projectIdSchema } from './validation';
import {
  EXPORT_FORMATS,
  MAX_CONCURRENCY,
  MAX_PAGE_SIZE,
  type ExportFormat,
} from './visitors-export-constants';

export * from './visitors-export-constants';

export interface VisitorTotals {
  human: number;
  ai: number;
  total: number;
}

export interface VisitorsExportResult {
  projectId: string;
  dateFrom: string;
  dateTo: string;
  totals: VisitorTotals;
  rows: number;
  pages: number;
  files: string[];
  warnings: string[];
}

/** Content of `manifest.json`, written last beside the export file. */
export interface VisitorsExportManifest {
  projectId: string;
  range: { dateFrom: string; dateTo: string; dateToExclusive: true };
  file: string;
  format: ExportFormat;
  rows: number;
  pages: number;
  /** sha256 (hex) of the export file's bytes. */
  sha256: string;
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
}

/** An IANA zone name that this runtime's Intl knows (the workflow sandbox uses the same V8 data). */
export const timeZoneSchema = z
  .string({ error: 'must be a string' })
  .refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Paris"');

/** Plain JSON carried through continue-as-new: counts only, the rows stay staged on disk. */
export const visitorsExportContinuationSchema = z
  .object({
    /** Names the staging area of this export attempt (stable across continue-as-new). */
    exportKey: z.string().min(1),
    dateFrom: apiDateSchema,
    dateTo: apiDateSchema,
    /** Pages counted so far, in offset order: the next run starts at offset pagesDone * pageSize. */
    pagesDone: intInRange(0),
    rowsDone: intInRange(0),
    totals: z.object({ human: intInRange(0), ai: intInRange(0), total: intInRange(0) }).nullable(),
    totalsMismatch: z.boolean(),
    /** 1, or 2 when the whole export runs again after pages disagreed on totals. */
    attempt: intInRange(1, 2),
    warnings: z.array(z.string()),
  })
  .strict();

export type VisitorsExportContinuation = z.infer<typeof visitorsExportContinuationSchema>;

export const visitorsExportInputSchema = z
  .object({
    projectId: projectIdSchema,
    /** Inclusive start, `YYYY-MM-DD` or ISO 8601. Omitted only for scheduled runs (then: the previous day). */
    dateFrom: apiDateSchema.optional(),
    /** Exclusive end, as in the service. */
    dateTo: apiDateSchema.optional(),
    pageSize: intInRange(1, MAX_PAGE_SIZE).optional(),
    concurrency: intInRange(1, MAX_CONCURRENCY).optional(),
    format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
    /** IANA zone of a scheduled run's "previous day" (default UTC). Set by the schedule's action input. */
    timeZone: timeZoneSchema.optional(),
    /** When pages disagree on the site-wide totals, run the whole export once more before warning. */
    retryOnTotalsMismatch: z.boolean({ error: 'must be true or false' }).optional(),
    /** Export events after which the workflow continues as new (default 1,000); tests lower it. */
    continueAsNewAfterEvents: intInRange(100).optional(),
    /** Set by the workflow itself when it continues as new; clients must not pass it. */
    continuation: visitorsExportContinuationSchema.optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    if ((input.dateFrom === undefined) !== (input.dateTo === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [input.dateFrom === undefined ? 'dateFrom' : 'dateTo'],
        message: 'dateFrom and dateTo must be given together (or both omitted in a scheduled run)',
      });
      return;
    }
    if (input.dateFrom === undefined || input.dateTo === undefined) return;
    const from = parseApiDate(input.dateFrom);
    const to = parseApiDate(input.dateTo);
    if (from !== undefined && to !== undefined && from >= to) {
      ctx.addIssue({
        code: 'custom',
        path: ['dateTo'],
        message: 'must be after dateFrom (dateTo is exclusive)',
      });
    }
  });

export type VisitorsExportInput = z.infer<typeof visitorsExportInputSchema>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
