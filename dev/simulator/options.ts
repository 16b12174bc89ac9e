import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { withBehaviour, type ResolvedBehaviour } from './jobs';
import { DEFAULT_RATE_LIMIT, parseRateLimit } from '../../src/contract/budget';
import { MAX_PORT } from '../../src/contract/validation';
import { API_KEY_PATTERN } from '../../src/docs-api/api-key';
import {
  budgetsSchema,
  errorBodiesSchema,
  jobBehaviourPatchSchema,
  parseSimulatorInput,
  visitorPathsSchema,
} from './schemas';
import type { BudgetSpec, BudgetsConfig, ErrorBodies, SimulatorOptions } from './types';

export interface ResolvedOptions {
  host: string;
  port: number;
  apiKey: string;
  jobs: ResolvedBehaviour;
  visitorPaths: number;
  seed: string;
  budgets: BudgetsConfig;
  clock: () => number;
  maxLogEntries: number;
  errorBodies: ErrorBodies;
}

/** The service's published create+message budget, on by default like the service's. */
export const SERVICE_AGENT_BUDGET = serviceBudget();

function serviceBudget(): BudgetSpec {
  const budget = parseRateLimit(DEFAULT_RATE_LIMIT);
  if (!budget) throw new Error(`DEFAULT_RATE_LIMIT ${DEFAULT_RATE_LIMIT} is not a rate limit`);
  return budget;
}

const optionsSchema = z
  .object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(0).max(MAX_PORT).optional(),
    apiKey: z
      .string()
      .regex(API_KEY_PATTERN, 'apiKey must have the form <letters/digits>_<secret>')
      .optional(),
    jobs: jobBehaviourPatchSchema.optional(),
    analytics: z
      .object({ paths: visitorPathsSchema.optional(), seed: z.string().optional() })
      .strict()
      .optional(),
    budgets: budgetsSchema.optional(),
    clock: z
      .custom<() => number>((value) => typeof value === 'function', 'clock must be a function')
      .optional(),
    maxLogEntries: z.number().int().min(1).optional(),
    errorBodies: errorBodiesSchema.optional(),
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
    budgets: { agent: SERVICE_AGENT_BUDGET, ...o.budgets },
    clock: o.clock ?? Date.now,
    maxLogEntries: o.maxLogEntries ?? 200_000,
    errorBodies: o.errorBodies ?? 'service',
  };
}
