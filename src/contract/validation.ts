import { z } from 'zod';
import { MAX_PROMPT_CHARS } from './agent-job-constants';
import { parseDuration } from './duration';
import { InputValidationError } from './input-error';

export { InputValidationError, MAX_PROMPT_CHARS };

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, subject: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InputValidationError(
    result.error.issues.map((issue) => ({
      field: issue.path.length > 0 ? issue.path.map(String).join('.') : subject,
      rule: issue.message,
    })),
    subject,
  );
}

/** A whole number in [min, max] (max optional), with messages that name the rule. */
export function intInRange(min: number, max?: number) {
  const atLeast = z
    .number({ error: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`);
  return max === undefined ? atLeast : atLeast.max(max, `must be at most ${max}`);
}

export const projectIdSchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'must start with a letter or digit and contain only letters, digits, ".", "_" and "-"',
  )
  .refine((id) => !id.includes('..'), 'must not contain ".."');

export const promptSchema = z
  .string({ error: 'is required and must be a string' })
  .refine((prompt) => prompt.trim().length > 0, 'must not be empty')
  .refine((prompt) => prompt.length <= MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`);

export const durationSchema = z
  .union([z.number(), z.string()], { error: 'must be a duration' })
  .refine(
    (value) => parseDuration(value) !== undefined,
    'must be a non-negative duration: milliseconds or a string such as "5s", "2m" or "1h30m"',
  );

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

/** Milliseconds since the epoch for a `YYYY-MM-DD` (UTC midnight) or ISO 8601 date-time, or undefined. */
export function parseApiDate(value: string): number | undefined {
  if (!DATE_ONLY.test(value) && !DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) return undefined;
  if (DATE_ONLY.test(value) && new Date(ms).toISOString().slice(0, 10) !== value) return undefined;
  return ms;
}

export const apiDateSchema = z
  .string({ error: 'must be a string' })
  .refine((value) => parseApiDate(value) !== undefined, 'must be YYYY-MM-DD or an ISO 8601 date-time');
