import { z } from 'zod';
import type { AgentJob } from '../contract/agent-job';
import type { VisitorTotals } from '../contract/visitors-export';

// Unknown fields are stripped (forward compatible); only id and status are required of a job.
const optionalString = z.string().nullish();

export const agentJobResponseSchema = z.object({
  id: z.string().min(1),
  status: z.string().min(1),
  prLink: z.string().nullish(),
  model: optionalString,
  source: z.object({ repository: optionalString, ref: optionalString }).nullish(),
  createdAt: optionalString,
  archivedAt: optionalString,
});

const count = z.number().int().nonnegative();

export const visitorTotalsSchema = z.object({ human: count, ai: count, total: count });

export const visitorRowSchema = z.object({ path: z.string(), human: count, ai: count, total: count });

export const visitorsPageResponseSchema = z.object({
  totals: visitorTotalsSchema,
  visitors: z.array(visitorRowSchema),
  hasMore: z.boolean(),
});

export type VisitorRow = z.infer<typeof visitorRowSchema>;

export interface VisitorsPage {
  totals: VisitorTotals;
  visitors: VisitorRow[];
  hasMore: boolean;
}

/** Normalizes a parsed job: null and omitted optional fields become absent, prLink becomes null. */
export function toAgentJob(parsed: z.infer<typeof agentJobResponseSchema>): AgentJob {
  const job: AgentJob = { id: parsed.id, status: parsed.status, prLink: parsed.prLink ?? null };
  if (parsed.model != null) job.model = parsed.model;
  if (parsed.source != null) {
    const source: NonNullable<AgentJob['source']> = {};
    if (parsed.source.repository != null) source.repository = parsed.source.repository;
    if (parsed.source.ref != null) source.ref = parsed.source.ref;
    job.source = source;
  }
  if (parsed.createdAt != null) job.createdAt = parsed.createdAt;
  if (parsed.archivedAt !== undefined) job.archivedAt = parsed.archivedAt;
  return job;
}
