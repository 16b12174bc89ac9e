import { z } from 'zod';
import {
  REDIRECT_STATUSES,
  type BudgetChanges,
  type Drift,
  type FaultKind,
  type FaultRule,
  type JobOutcome,
  type ProjectConfig,
} from './types';

export const MAX_VISITOR_PATHS = 1_000_000;

export const jobOutcomeSchema = z.enum(['completed', 'completed-no-edits', 'failed', 'archived'] satisfies [
  JobOutcome,
  ...JobOutcome[],
]);

export const jobBehaviourPatchSchema = z
  .object({
    durationMs: z.number().int().min(0),
    outcome: jobOutcomeSchema,
    archiveAfterMs: z.number().int().min(0),
  })
  .partial()
  .strict();

/**
 * Digits that name a whole number in [min, max] (`max` undefined: no upper bound): a query parameter or a flag.
 * The message names it the way the service does: "limit must be an integer from 1 to 250".
 */
export function digitsInRange(name: string, min: number, max?: number): z.ZodType<number, string> {
  const message =
    max === undefined
      ? `${name} must be an integer >= ${min}`
      : `${name} must be an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d{1,16}$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= (max ?? Number.MAX_SAFE_INTEGER), message);
}

export const visitorPathsSchema = z.number().int().min(0).max(MAX_VISITOR_PATHS);

/** 'service': `{ "error": "<message>" }`, as the real service; 'detailed': `{ "error": { code, message, field? } }`. */
export const errorBodiesSchema = z.enum(['service', 'detailed']);

export const projectConfigSchema = z
  .object({
    jobs: jobBehaviourPatchSchema.optional(),
    visitorPaths: visitorPathsSchema.optional(),
    removedRows: z.number().int().min(0).optional(),
    errorBodies: errorBodiesSchema.optional(),
  })
  .strict();

export const budgetSpecSchema = z
  .object({
    requests: z.number().int().min(0),
    windowMs: z.number().int().min(1),
    retryAfter: z.boolean().optional(),
  })
  .strict();

export const budgetsSchema = z
  .object({ analytics: budgetSpecSchema.optional(), agent: budgetSpecSchema.optional() })
  .strict();

/** POST /__sim/budgets: null turns a budget off. */
export const budgetChangesSchema = z
  .object({
    analytics: budgetSpecSchema.nullable().optional(),
    agent: budgetSpecSchema.nullable().optional(),
  })
  .strict();

/** POST /__sim/budgets/:name/spend: a foreign spender (dashboards, syncs) uses the budget. */
export const budgetSpendSchema = z
  .object({ requests: z.number().int().min(1), projectId: z.string().min(1).optional() })
  .strict();

export const completeJobSchema = z.object({ outcome: jobOutcomeSchema.optional() }).strict();

export const promptBodySchema = z.object(
  { prompt: z.string({ error: 'prompt must be a string' }).min(1, 'prompt must not be empty') },
  { error: 'the body must be a JSON object with a prompt' },
);

const FAULT_KINDS = [
  'latency',
  'status',
  'rateLimit',
  'hang',
  'reset',
  'malformed',
  'drift',
  'redirect',
] as const satisfies [FaultKind, ...FaultKind[]];

const DRIFTS = [
  'unknown-status',
  'missing-id',
  'extra-fields',
  'wrong-types',
  'odd-optional-types',
  'null-ref',
  'archivedAt-omitted',
] as const satisfies [Drift, ...Drift[]];

/** The optional fields each kind takes; any other kind-specific field is a mistake worth reporting. */
const FIELDS_OF_KIND: Record<FaultKind, readonly string[]> = {
  latency: ['latencyMs'],
  status: ['status', 'retryAfter', 'afterProcessing'],
  rateLimit: ['retryAfter'],
  hang: ['afterProcessing'],
  reset: ['afterProcessing'],
  malformed: ['malformed'],
  drift: ['drift'],
  redirect: ['redirect'],
};
const REQUIRED_OF_KIND: Partial<Record<FaultKind, string>> = {
  latency: 'latencyMs',
  status: 'status',
  malformed: 'malformed',
  drift: 'drift',
};
const KIND_SPECIFIC = [
  'latencyMs',
  'status',
  'retryAfter',
  'afterProcessing',
  'malformed',
  'drift',
  'redirect',
] as const;

export const faultRuleSchema = z
  .object({
    route: z.enum(['createJob', 'getJob', 'sendMessage', 'getVisitors', '*']),
    projectId: z.string().min(1).optional(),
    kind: z.enum(FAULT_KINDS),
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    status: z.number().int().min(400).max(599).optional(),
    retryAfter: z
      .union([
        z.object({ seconds: z.number().int().min(0) }).strict(),
        z.object({ httpDateInSeconds: z.number().int().min(0) }).strict(),
      ])
      .optional(),
    afterProcessing: z.boolean().optional(),
    malformed: z.enum(['not-json', 'html-200', 'no-content-type', 'truncated-json']).optional(),
    drift: z.enum(DRIFTS).optional(),
    redirect: z
      .object({
        status: z.union(REDIRECT_STATUSES.map((status) => z.literal(status))).optional(),
        location: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    times: z.number().int().min(1).optional(),
    probability: z.number().min(0).max(1).optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    for (const field of KIND_SPECIFIC) {
      if (rule[field] !== undefined && !FIELDS_OF_KIND[rule.kind].includes(field)) {
        ctx.addIssue({ code: 'custom', path: [field], message: `does not apply to kind '${rule.kind}'` });
      }
    }
    const required = REQUIRED_OF_KIND[rule.kind];
    if (required !== undefined && rule[required as keyof typeof rule] === undefined) {
      ctx.addIssue({ code: 'custom', path: [required], message: `is required for kind '${rule.kind}'` });
    }
  });

export interface Invalid {
  field: string;
  message: string;
}

/** The first issue, as the dotted field it concerns and a message that starts with that field. */
export function firstIssue(error: z.ZodError, fallbackField: string): Invalid {
  const issue = error.issues[0];
  if (!issue) return { field: fallbackField, message: `${fallbackField} is invalid` };
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''].join('.');
    return { field, message: `${field} is not a known field` };
  }
  const field = path.join('.') || fallbackField;
  return { field, message: issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}` };
}

/** The simulator's own check of what its callers configure: a TypeError naming the first bad field. */
export function parseSimulatorInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { message } = firstIssue(parsed.error, what);
  throw new TypeError(`invalid ${what}: ${message}`);
}

export function parseFaultRule(value: unknown): FaultRule {
  return parseSimulatorInput(faultRuleSchema, value, 'fault rule');
}

export function parseProjectConfig(value: unknown): ProjectConfig {
  return parseSimulatorInput(projectConfigSchema, value, 'project configuration');
}

export function parseBudgetChanges(value: unknown): BudgetChanges {
  return parseSimulatorInput(budgetChangesSchema, value, 'budgets');
}
