import { z } from 'zod';
import { MAX_CATCH_UP_DAYS } from './nightly';
import { intInRange } from './validation';
import { visitorsExportInputSchema } from './visitors-export';

const { projectId, timeZone, format, pageSize, concurrency } = visitorsExportInputSchema.shape;

/**
 * What a nightly schedule starts `visitorsNightly` with, checked at every boundary (the workflow checks it in a
 * local activity). Without `timeZone`, the days of the schedule's own zone (else UTC) are exported.
 */
export const visitorsNightlyInputSchema = z
  .object({
    projectId,
    timeZone,
    format,
    pageSize,
    concurrency,
    /** Days one run exports at most (default 31); the rest is left to the next runs. */
    maxCatchUpDays: intInRange(1, MAX_CATCH_UP_DAYS).optional(),
  })
  .strict();

export type VisitorsNightlyInput = z.infer<typeof visitorsNightlyInputSchema>;

/**
 * What a nightly run keeps in its memo (after its plan, again at its end) for `schedule describe` and the lag metric
 * without a worker; `covered` is merged (memoCovered). Never read back by a run.
 */
export const nightlyRunMemoSchema = z.object({
  timeZone: z.string(),
  through: z.string(),
  covered: z.array(z.tuple([z.string(), z.string()])).default([]),
  olderExports: z.boolean(),
  // An empty list does not survive in a memo: read as empty.
  failed: z.array(z.object({ day: z.string(), error: z.string() })).default([]),
});
export type NightlyRunMemo = z.infer<typeof nightlyRunMemoSchema>;
