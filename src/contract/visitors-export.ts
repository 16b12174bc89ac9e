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
