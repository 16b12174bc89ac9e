import type { ScheduleDescription } from '@temporalio/client';
import { z } from 'zod';
import { visitorsNightlyInputSchema } from '../contract/nightly-schema';

const { format, pageSize, concurrency, timeZone, maxCatchUpDays } = visitorsNightlyInputSchema.shape;

/**
 * What a schedule's runs are started with, as far as the schedule's settings go. The schedule may have been made
 * by hand (the CLI, the UI): a setting that breaks its rule reads as absent, and the workflow itself refuses it.
 */
const scheduledInputSchema = z.object({
  format: format.catch(undefined),
  pageSize: pageSize.catch(undefined),
  concurrency: concurrency.catch(undefined),
  timeZone: timeZone.catch(undefined),
  maxCatchUpDays: maxCatchUpDays.catch(undefined),
});

export type ScheduledInput = z.output<typeof scheduledInputSchema>;

/** The settings of the input a schedule starts its runs with (none when its action starts no workflow). */
export function scheduleInput(description: ScheduleDescription): ScheduledInput {
  const action = description.action.type === 'startWorkflow' ? description.action : undefined;
  const parsed = scheduledInputSchema.safeParse(action?.args?.[0] ?? {});
  return parsed.success ? parsed.data : {};
}

/** The fields that are set: an optional field must be absent rather than undefined (exactOptionalPropertyTypes). */
export function defined<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** The zone whose days the schedule's runs export: the input's, else the schedule's own (as the workflow reads). */
export function zoneOf(description: ScheduleDescription): string {
  return scheduleInput(description).timeZone ?? (description.spec.timezone || 'UTC');
}
