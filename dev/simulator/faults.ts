import { fnv1a, seededRandom } from './hash';
import { parseFaultRule } from './schemas';
import type { FaultController, FaultKind, FaultRule, RouteName } from './types';

/**
 * When a kind acts on a request: 'delay' before anything else, 'disrupt' instead of (or after) the service's
 * answer, 'shape' on a 2xx answer. One rule per stage applies to a request, so a latency rule composes with a
 * status or drift rule.
 */
export type FaultStage = 'delay' | 'disrupt' | 'shape';

const STAGE_OF: Record<FaultKind, FaultStage> = {
  latency: 'delay',
  status: 'disrupt',
  rateLimit: 'disrupt',
  hang: 'disrupt',
  reset: 'disrupt',
  malformed: 'shape',
  drift: 'shape',
  redirect: 'disrupt',
};

const RANDOM_SEED = fnv1a('docs-sim-faults');

interface ActiveRule {
  id: string;
  rule: FaultRule;
  remaining: number;
}

/** Faults injected on demand; within a stage the earliest added matching rule wins. */
export class FaultRules implements FaultController {
  #rules: ActiveRule[] = [];
  #nextId = 0;
  #random = seededRandom(RANDOM_SEED);

  add(rule: FaultRule): string {
    const parsed = parseFaultRule(rule);
    const id = `fault_${++this.#nextId}`;
    this.#rules.push({ id, rule: parsed, remaining: parsed.times ?? Infinity });
    return id;
  }

  remove(id: string): void {
    this.#rules = this.#rules.filter((r) => r.id !== id);
  }

  clear(): void {
    this.#rules = [];
    this.#random = seededRandom(RANDOM_SEED);
  }

  list(): FaultRule[] {
    return this.#rules.map((r) => structuredClone(r.rule));
  }

  /** The rules with their ids and how many applications remain (null: unlimited). */
  entries(): { id: string; remaining: number | null; rule: FaultRule }[] {
    return this.#rules.map((r) => ({
      id: r.id,
      remaining: Number.isFinite(r.remaining) ? r.remaining : null,
      rule: structuredClone(r.rule),
    }));
  }

  has(id: string): boolean {
    return this.#rules.some((r) => r.id === id);
  }

  /** The rule of this stage that applies to the request, consuming one of its `times`. */
  take(
    stage: FaultStage,
    route: RouteName,
    projectId: string,
    applicable: (rule: FaultRule) => boolean = () => true,
  ): FaultRule | undefined {
    for (const active of this.#rules) {
      const { rule } = active;
      if (STAGE_OF[rule.kind] !== stage) continue;
      if (rule.route !== '*' && rule.route !== route) continue;
      if (rule.projectId !== undefined && rule.projectId !== projectId) continue;
      if (!applicable(rule)) continue;
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      active.remaining -= 1;
      if (active.remaining <= 0) this.remove(active.id);
      return rule;
    }
    return undefined;
  }
}
