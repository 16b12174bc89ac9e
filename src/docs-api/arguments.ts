import { z } from 'zod';
import { MAX_PAGE_SIZE } from '../contract/visitors-export';
import { apiDateSchema, checkDateOrder } from '../contract/api-dates';
import { intInRange, projectIdSchema, promptSchema } from '../contract/validation';
import { InvalidArgumentError, type DocsApiOperation } from './errors';

export const jobIdSchema = z
  .string({ error: 'is required and must be a string' })
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .refine(
    (id) => !/[\s/]/.test(id) && id !== '.' && id !== '..',
    'must not contain "/" or spaces, nor be "." or ".."',
  );

export interface VisitorsQuery {
  dateFrom?: string;
  dateTo?: string;
  /** 1..250, default 50 at the service. */
  limit?: number;
  /** >= 0. */
  offset?: number;
}

const visitorsQuerySchema = z
  .object({
    dateFrom: apiDateSchema.optional(),
    dateTo: apiDateSchema.optional(),
    limit: intInRange(1, MAX_PAGE_SIZE).optional(),
    offset: intInRange(0).optional(),
  })
  .superRefine(checkDateOrder);

function check<S extends z.ZodType>(
  schema: S,
  value: unknown,
  field: string,
  operation: DocsApiOperation,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [field, ...(issue?.path ?? []).map(String)].filter((part) => part !== '').join('.');
  throw new InvalidArgumentError(path, issue?.message ?? 'is invalid', operation);
}

export const checkProjectId = (value: unknown, op: DocsApiOperation): string =>
  check(projectIdSchema, value, 'projectId', op);
export const checkJobId = (value: unknown, op: DocsApiOperation): string =>
  check(jobIdSchema, value, 'jobId', op);
export const checkPrompt = (value: unknown, op: DocsApiOperation): string =>
  check(promptSchema, value, 'prompt', op);
export const checkVisitorsQuery = (value: unknown): VisitorsQuery =>
  check(visitorsQuerySchema, value, '', 'getVisitors') as VisitorsQuery;
