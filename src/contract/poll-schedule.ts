import type { PollingOptions } from './agent-job';
import { DEFAULT_POLLING, POLL_JITTER_RATIO } from './agent-job-constants';
import { parseDuration, type DurationInput } from './duration';

/** Polling options resolved to milliseconds (pure: shared by the workflow, the poll activity, tests and docs). */
export interface PollingSettings {
  initialIntervalMs: number;
  maxIntervalMs: number;
  backoffCoefficient: number;
  deadlineMs: number;
}

function toMs(value: DurationInput | undefined, fallback: DurationInput): number {
  // Input was validated: an undefined parse can only be the fallback's, which is a literal.
  return parseDuration(value ?? fallback) ?? (parseDuration(fallback) as number);
}

export function resolvePolling(polling: PollingOptions | undefined): PollingSettings {
  return {
    initialIntervalMs: toMs(polling?.initialInterval, DEFAULT_POLLING.initialInterval),
    maxIntervalMs: toMs(polling?.maxInterval, DEFAULT_POLLING.maxInterval),
    backoffCoefficient: polling?.backoffCoefficient ?? DEFAULT_POLLING.backoffCoefficient,
    deadlineMs: toMs(polling?.deadline, DEFAULT_POLLING.deadline),
  };
}

/**
 * The wait before a poll: initialInterval × coefficient^step, capped at maxInterval, then shortened by up to
 * POLL_JITTER_RATIO. The jitter is a hash of `jitterKey` (workflow id and poll number), so the schedule is the
 * same on every replay and can be recomputed by anyone, yet workflows started together drift apart.
 */
export function pollDelayMs(settings: PollingSettings, step: number, jitterKey: string): number {
  const grown = settings.initialIntervalMs * settings.backoffCoefficient ** step;
  const base = Math.min(settings.maxIntervalMs, grown);
  return Math.max(1, Math.round(base * (1 - POLL_JITTER_RATIO * unitHash(jitterKey))));
}

export function pollJitterKey(workflowId: string, pollNumber: number): string {
  return `${workflowId}#${pollNumber}`;
}

/** FNV-1a (32 bit) of the text, mapped to [0, 1). */
export function unitHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}
