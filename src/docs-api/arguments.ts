import { z } from 'zod';
import { MAX_PAGE_SIZE } from '../contract/visitors-export';
import { apiDateSchema, checkDateOrder } from '../contract/api-dates';
import {
  InputValidationError,
  intInRange,
  jobIdSchema,
  parseOrThrow,
  projectIdSchema,
  promptSchema,
} from '../contract/validation';
import { InvalidArgumentError, type DocsApiOperation } from './errors';

const visitorsQuerySchema = z
  .object({
    dateFrom: apiDateSchema.optional(),
    dateTo: apiDateSchema.optional(),
    /** 1..250, default 50 at the service. */
    limit: intInRange(1, MAX_PAGE_SIZE).optional(),
    offset: intInRange(0).optional(),
  })
  .superRefine(checkDateOrder);

export type VisitorsQuery = z.infer<typeof visitorsQuerySchema>;

function check<S extends z.ZodType>(
  schema: S,
  value: unknown,
  field: string,
  operation: DocsApiOperation,
): z.output<S> {
  try {
    return parseOrThrow(schema, value, field);
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    const [first] = error.issues;
    throw new InvalidArgumentError(first?.field ?? field, first?.rule ?? 'is invalid', operation);
  }
}

export const checkProjectId = (value: unknown, op: DocsApiOperation): string =>
  check(projectIdSchema, value, 'projectId', op);
export const checkJobId = (value: unknown, op: DocsApiOperation): string =>
  check(jobIdSchema, value, 'jobId', op);
export const checkPrompt = (value: unknown, op: DocsApiOperation): string =>
  check(promptSchema, value, 'prompt', op);
export const checkVisitorsQuery = (value: unknown): VisitorsQuery =>
  check(visitorsQuerySchema, value, '', 'getVisitors');
