import { z } from 'zod';
import { fnv1a, seededRandom } from './hash';
import type { FaultRule, RouteName } from './types';

export const faultRuleSchema = z
  .object({
    route: z.enum(['createJob', 'getJob', 'sendMessage', 'getVisitors', '*']),
    projectId: z.string().optional(),
    kind: z.enum(['latency', 'status', 'rateLimit', 'hang', 'reset', 'malformed', 'drift']),
    latencyMs: z.number().int().min(0).optional(),
    status: z.number().int().min(100).max(599).optional(),
    retryAfter: z
      .union([z.object({ seconds: z.number().min(0) }), z.object({ httpDateInSeconds: z.number().min(0) })])
      .optional(),
    afterProcessing: z.boolean().optional(),
    malformed: z.enum(['not-json', 'html-200', 'no-content-type', 'truncated-json']).optional(),
    drift: z
      .enum(['unknown-status', 'missing-id', 'extra-fields', 'wrong-types', 'archivedAt-omitted'])
      .optional(),
    times: z.number().int().min(1).optional(),
    probability: z.number().min(0).max(1).optional(),
  })
  .strict();

interface ActiveRule {
  id: string;
  rule: FaultRule;
  remaining: number;
}

/** Faults injected on demand, matched in the order they were added. */
export class FaultController {
  #rules: ActiveRule[] = [];
  #nextId = 0;
  #random = seededRandom(fnv1a('faults'));

  add(rule: FaultRule): string {
    const id = `fault_${++this.#nextId}`;
    this.#rules.push({ id, rule: { ...rule }, remaining: rule.times ?? Infinity });
    return id;
  }

  remove(id: string): void {
    this.#rules = this.#rules.filter((r) => r.id !== id);
  }

  clear(): void {
    this.#rules = [];
    this.#random = seededRandom(fnv1a('faults'));
  }

  list(): FaultRule[] {
    return this.#rules.map((r) => ({ ...r.rule }));
  }

  /** The fault that applies to this request, consuming one of its `times`. */
  take(route: RouteName, projectId: string | undefined): FaultRule | undefined {
    for (const active of this.#rules) {
      const { rule } = active;
      if (rule.route !== '*' && rule.route !== route) continue;
      if (rule.projectId !== undefined && rule.projectId !== projectId) continue;
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      active.remaining -= 1;
      if (active.remaining <= 0) this.remove(active.id);
      return rule;
    }
    return undefined;
  }
}
