import { z } from 'zod';
import type { DurationInput } from './duration';
import { apiDateSchema, durationSchema, parseApiDate, projectIdSchema } from './validation';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const DEFAULT_PAGE_SIZE = 250;
export const MAX_PAGE_SIZE = 250;
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;
/** How long an export may wait for the analytics budget in all, from its first run. */
export const DEFAULT_EXPORT_DEADLINE = '24h';

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
  /** How long the export may take in all, waits for the analytics budget included (default 24 h). */
  deadline?: DurationInput;
  /** When pages disagree on the site-wide totals, run the whole export once more before warning. */
  retryOnTotalsMismatch?: boolean;
  /** Export events after which the workflow continues as new (default 1,000); tests lower it. */
  continueAsNewAfterEvents?: number;
  /** Set by the workflow itself when it continues as new; clients must not pass it. */
  continuation?: VisitorsExportContinuation;
}

/** Plain JSON carried through continue-as-new: counts only, the rows stay staged on disk. */
export interface VisitorsExportContinuation {
  /** Names the staging area of this export attempt (stable across continue-as-new). */
  exportKey: string;
  dateFrom: string;
  dateTo: string;
  /** Pages counted so far, in offset order: the next run starts at offset pagesDone * pageSize. */
  pagesDone: number;
  rowsDone: number;
  totals: VisitorTotals | null;
  totalsMismatch: boolean;
  /** 1, or 2 when the whole export runs again after pages disagreed on totals. */
  attempt: number;
  warnings: string[];
  /** ms since the epoch: a budget wait past this fails the export (absent in runs before budgets). */
  deadlineAt?: number;
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

/** Failure types the workflow ends with (ApplicationFailure.type), for callers that match on them. */
export const VisitorsExportFailureType = {
  /** A field of the input breaks a rule; nothing was requested. Non-retryable. */
  invalidInput: 'InvalidInput',
  /** A page the export needs failed for good (a 4xx, or retries exhausted); `cause` is the service's error. */
  pageFailed: 'VisitorsExportPageFailed',
  /** A page or the merge could not find the export's staging area: EXPORT_DIR is not shared by every host. */
  stagingMissing: 'ExportStagingMissing',
} as const;

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
  /** ISO time the analytics budget is expected to let the next page go; absent when no page waits. */
  waitingForBudgetUntil?: string;
}

/** An IANA zone name that this runtime's Intl knows (the workflow sandbox uses the same V8 data). */
export const timeZoneSchema = z
  .string({ error: 'must be a string' })
  .refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Paris"');

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
    timeZone: timeZoneSchema.optional(),
    deadline: durationSchema.optional(),
    retryOnTotalsMismatch: z.boolean({ error: 'must be true or false' }).optional(),
    continueAsNewAfterEvents: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(100, 'must be at least 100')
      .optional(),
    continuation: z
      .object({
        exportKey: z.string().min(1),
        dateFrom: apiDateSchema,
        dateTo: apiDateSchema,
        pagesDone: z.number().int().min(0),
        rowsDone: z.number().int().min(0),
        totals: z.object({ human: z.number(), ai: z.number(), total: z.number() }).nullable(),
        totalsMismatch: z.boolean(),
        attempt: z.number().int().min(1).max(2),
        warnings: z.array(z.string()),
        deadlineAt: z.number().optional(),
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
