import { z } from 'zod';
import { parseDuration } from './duration';

/** Thrown (or wrapped in a non-retryable failure) when input breaks a rule; the message names the field. */
export class InputValidationError extends Error {
  override readonly name = 'InputValidationError';
  constructor(
    readonly issues: readonly { field: string; rule: string }[],
    subject: string,
  ) {
    super(`Invalid ${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
  }
}

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

/** Upper bound that keeps every prompt far below Temporal's 2 MB payload limit, also once carried in state. */
export const MAX_PROMPT_CHARS = 32_000;

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
