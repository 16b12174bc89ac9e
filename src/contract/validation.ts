import { z } from 'zod';
import { MAX_PROMPT_CHARS, promptTextIssue } from './agent-job-constants';
import { parseDuration } from './duration';
import { InputValidationError } from './failure-types';

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

/** A whole number given as text (an environment variable, a flag), then `rule`'s (e.g. intInRange). */
export const intFromText = (rule: z.ZodNumber) =>
  z
    .string()
    .regex(/^\s*-?\d+\s*$/, 'must be an integer')
    .transform(Number)
    .pipe(rule);

export const MAX_PORT = 65535;

/** A TCP port to listen on; 0 asks the system for a free one. */
export const portFromText = intFromText(intInRange(0, MAX_PORT));

export const projectIdSchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'must start with a letter or digit and contain only letters, digits, ".", "_" and "-"',
  )
  .refine((id) => !id.includes('..'), 'must not contain ".."');

/** A job's id as the service names it, safe in a URL path segment. */
export const jobIdSchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .refine(
    (id) => !/[\s/]/.test(id) && id !== '.' && id !== '..',
    'must not contain "/" or spaces, nor be "." or ".."',
  );

export const promptSchema = z
  .string({ error: 'is required and must be a string' })
  .superRefine((prompt, ctx) => {
    const rule = promptTextIssue(prompt);
    if (rule !== undefined) ctx.addIssue({ code: 'custom', message: rule });
  })
  .refine((prompt) => prompt.length <= MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`);

export const durationSchema = z
  .union([z.number(), z.string()], { error: 'must be a duration' })
  .refine(
    (value) => parseDuration(value) !== undefined,
    'must be a non-negative duration: milliseconds or a string such as "5s", "2m" or "1h30m"',
  );
