import { z } from 'zod';
import { MAX_CATCH_UP_DAYS } from './nightly';
import { intInRange, projectIdSchema } from './validation';
import { EXPORT_FORMATS, MAX_CONCURRENCY, MAX_PAGE_SIZE, timeZoneSchema } from './visitors-export';

/**
 * What a nightly schedule starts `visitorsNightly` with, checked at every boundary (the workflow checks it in a
 * local activity). Without `timeZone`, the days of the schedule's own zone (else UTC) are exported.
 */
export const visitorsNightlyInputSchema = z
  .object({
    projectId: projectIdSchema,
    timeZone: timeZoneSchema.optional(),
    format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
    pageSize: intInRange(1, MAX_PAGE_SIZE).optional(),
    concurrency: intInRange(1, MAX_CONCURRENCY).optional(),
    /** Days one run exports at most (default 31); the rest is left to the next runs. */
    maxCatchUpDays: intInRange(1, MAX_CATCH_UP_DAYS).optional(),
  })
  .strict();

export type VisitorsNightlyInput = z.infer<typeof visitorsNightlyInputSchema>;
