import { z } from 'zod';
import { API_DATE_RULE, parseApiDate } from '../../src/contract/api-dates';
import { DAY_MS } from './analytics';
import { MAX_PAGE_SIZE } from '../../src/contract/visitors-export-constants';
import { digitsInRange, firstIssue, type Invalid } from './schemas';

/** With no dates, the range is the last 30 full UTC days: from 30 days before today 00:00 UTC up to it. */
export const DEFAULT_RANGE_DAYS = 30;

export interface VisitorsQuery {
  limit: number;
  offset: number;
  fromMs: number;
  /** Exclusive. */
  toMs: number;
}

function date(name: string): z.ZodType<number, string> {
  // The rule the worker's client checks before sending: one module, so the two cannot disagree.
  return z.string().transform((value, ctx) => {
    const ms = parseApiDate(value);
    if (ms === undefined) ctx.addIssue({ code: 'custom', message: `${name} ${API_DATE_RULE}` });
    return ms ?? z.NEVER;
  });
}

const querySchema = z.object({
  limit: digitsInRange('limit', 1, MAX_PAGE_SIZE).optional(),
  offset: digitsInRange('offset', 0).optional(),
  dateFrom: date('dateFrom').optional(),
  dateTo: date('dateTo').optional(),
});

/** Validates the query of the visitors operation; unknown parameters are ignored. */
export function parseVisitorsQuery(
  params: URLSearchParams,
  now: number,
): { ok: true; query: VisitorsQuery } | ({ ok: false } & Invalid) {
  const parsed = querySchema.safeParse(Object.fromEntries(params));
  if (!parsed.success) return { ok: false, ...firstIssue(parsed.error, 'query') };
  const { limit = 50, offset = 0, dateFrom, dateTo } = parsed.data;
  const toMs = dateTo ?? Math.floor(now / DAY_MS) * DAY_MS;
  const fromMs = dateFrom ?? toMs - DEFAULT_RANGE_DAYS * DAY_MS;
  if (fromMs >= toMs) {
    return dateTo === undefined
      ? { ok: false, field: 'dateFrom', message: 'dateFrom must be before dateTo (default: today 00:00 UTC)' }
      : { ok: false, field: 'dateTo', message: 'dateTo must be after dateFrom' };
  }
  return { ok: true, query: { limit, offset, fromMs, toMs } };
}
