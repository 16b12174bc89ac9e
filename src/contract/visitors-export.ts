import { z } from 'zod';
import { apiDateSchema, parseApiDate, projectIdSchema } from './validation';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const DEFAULT_PAGE_SIZE = 250;
export const MAX_PAGE_SIZE = 250;
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;

export interface VisitorsExportInput {
  projectId: string;
  /** Inclusive start, `YYYY-MM-DD` or ISO 8601. Omitted only for scheduled runs (then: the previous day). */
  dateFrom?: string;
  /** Exclusive end, as in the service. */
  dateTo?: string;
  pageSize?: number;
  concurrency?: number;
  format?: ExportFormat;
  /** IANA zone of a scheduled run's "previous day" (default UTC). Set by the schedule's action input. */
  timeZone?: string;
  /** When pages disagree on the site-wide totals, run the whole export once more before warning. */
  retryOnTotalsMismatch?: boolean;
  /** Export events after which the workflow continues as new (default 1,000); tests lower it. */
  continueAsNewAfterEvents?: number;
  /** Internal: progress carried across continue-as-new. */
  continuation?: VisitorsExportContinuation;
}

/** Plain JSON carried through continue-as-new: counts only, the rows stay staged on disk. */
export interface VisitorsExportContinuation {
  exportKey: string;
  dateFrom: string;
  dateTo: string;
  nextOffset: number;
  pagesDone: number;
  rowsDone: number;
  totals: VisitorTotals | null;
  totalsMismatch: boolean;
  attempt: number;
}

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

export interface ExportProgress {
  pagesDone: number;
  rowsDone: number;
  inFlight: number;
  done: boolean;
}

export const visitorsExportInputSchema = z
  .object({
    projectId: projectIdSchema,
    dateFrom: apiDateSchema.optional(),
    dateTo: apiDateSchema.optional(),
    pageSize: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`)
      .optional(),
    concurrency: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(MAX_CONCURRENCY, `must be at most ${MAX_CONCURRENCY}`)
      .optional(),
    format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
    timeZone: z
      .string({ error: 'must be a string' })
      .refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Paris"')
      .optional(),
    retryOnTotalsMismatch: z.boolean({ error: 'must be true or false' }).optional(),
    continueAsNewAfterEvents: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(100, 'must be at least 100')
      .optional(),
    continuation: z
      .object({
        exportKey: z.string(),
        dateFrom: z.string(),
        dateTo: z.string(),
        nextOffset: z.number().int().min(0),
        pagesDone: z.number().int().min(0),
        rowsDone: z.number().int().min(0),
        totals: z.object({ human: z.number(), ai: z.number(), total: z.number() }).nullable(),
        totalsMismatch: z.boolean(),
        attempt: z.number().int().min(1),
      })
      .optional(),
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

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
