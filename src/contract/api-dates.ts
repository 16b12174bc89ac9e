import { z } from 'zod';

/**
 * The one rule for the dates of the visitors operation, shared by the HTTP client, the workflow's input check and
 * the simulator, so that what the worker sends is what the service accepts (docs/visitors-export.md, "Dates").
 */
export const API_DATE_RULE =
  'must be YYYY-MM-DD or an ISO 8601 date-time YYYY-MM-DDTHH:MM:SS[.fraction] with Z, ±HH:MM or no offset (UTC)';

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:(Z)|([+-])(\d{2}):(\d{2}))?$/;

/** Milliseconds since the epoch of a date under API_DATE_RULE, or undefined when it breaks the rule. */
export function parseApiDate(value: string): number | undefined {
  const day = DATE_ONLY.exec(value);
  if (day) return utcMs(day.slice(1, 4).map(Number), [0, 0, 0]);
  const m = DATE_TIME.exec(value);
  if (!m) return undefined;
  const [hour, minute, second] = m.slice(4, 7).map(Number);
  const ms = utcMs(m.slice(1, 4).map(Number), [hour ?? 0, minute ?? 0, second ?? 0]);
  if (ms === undefined) return undefined;
  const fraction = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000);
  if (m[9] === undefined) return ms + fraction;
  const offsetHours = Number(m[10]);
  const offsetMinutes = Number(m[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000 * (m[9] === '-' ? -1 : 1);
  return ms + fraction - offsetMs;
}

/** A date under API_DATE_RULE. */
export const apiDateSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .refine((value) => parseApiDate(value) !== undefined, API_DATE_RULE);

/** Adds the issue "dateTo must be after dateFrom" when both are valid dates and the range is empty or reversed. */
export function checkDateOrder(
  range: { dateFrom?: string | undefined; dateTo?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (range.dateFrom === undefined || range.dateTo === undefined) return;
  const from = parseApiDate(range.dateFrom);
  const to = parseApiDate(range.dateTo);
  if (from !== undefined && to !== undefined && from >= to) {
    ctx.addIssue({
      code: 'custom',
      path: ['dateTo'],
      message: 'must be after dateFrom (dateTo is exclusive)',
    });
  }
}

/** The instant of a wall-clock time read as UTC, when every part names a real calendar day and time of day. */
function utcMs([year = 0, month = 0, day = 0]: number[], [hour, minute, second]: [number, number, number]) {
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(ms);
  // Date.UTC rolls 2024-02-30 over to March 1st: a day that does not exist does not come back.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined;
  }
  return ms;
}
