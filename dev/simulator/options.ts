import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { withBehaviour, type ResolvedBehaviour } from './jobs';
import { API_KEY_PATTERN } from '../../src/docs-api/api-key';
import { budgetsSchema, jobBehaviourPatchSchema, parseSimulatorInput, visitorPathsSchema } from './schemas';
import type { BudgetsConfig, ErrorBodies, SimulatorOptions } from './types';

export interface ResolvedOptions {
  host: string;
  port: number;
  apiKey: string;
  jobs: ResolvedBehaviour;
  visitorPaths: number;
  seed: string;
  perHour: { createJob: number; sendMessage: number };
  budgets: BudgetsConfig;
  clock: () => number;
  maxLogEntries: number;
  errorBodies: ErrorBodies;
}

const optionsSchema = z
  .object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(0).max(65535).optional(),
    apiKey: z
      .string()
      .regex(API_KEY_PATTERN, 'apiKey must have the form <letters/digits>_<secret>')
      .optional(),
    jobs: jobBehaviourPatchSchema.optional(),
    analytics: z
      .object({ paths: visitorPathsSchema.optional(), seed: z.string().optional() })
      .strict()
      .optional(),
    rateLimit: z
      .object({
        createPerHour: z.number().int().min(0).optional(),
        messagePerHour: z.number().int().min(0).optional(),
      })
      .strict()
      .optional(),
    budgets: budgetsSchema.optional(),
    clock: z
      .custom<() => number>((value) => typeof value === 'function', 'clock must be a function')
      .optional(),
    maxLogEntries: z.number().int().min(1).optional(),
    errorBodies: z.enum(['service', 'detailed']).optional(),
  })
  .strict();

/** Validates the options (throws a TypeError naming the field; never the key) and fills in the defaults. */
export function resolveOptions(options: SimulatorOptions): ResolvedOptions {
  const o = parseSimulatorInput(optionsSchema, options, 'simulator options');
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    apiKey: o.apiKey ?? `sim_${randomBytes(16).toString('hex')}`,
    jobs: withBehaviour({ durationMs: 2000, outcome: 'completed', archiveAfterMs: 0 }, o.jobs),
    visitorPaths: o.analytics?.paths ?? 120,
    seed: o.analytics?.seed ?? 'docs-sim',
    perHour: {
      createJob: o.rateLimit?.createPerHour ?? 100,
      sendMessage: o.rateLimit?.messagePerHour ?? 100,
    },
    budgets: o.budgets ?? {},
    clock: o.clock ?? Date.now,
    maxLogEntries: o.maxLogEntries ?? 200_000,
    errorBodies: o.errorBodies ?? 'detailed',
  };
}
