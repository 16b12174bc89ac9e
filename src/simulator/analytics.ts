import { fnv1a } from './hash';

export interface VisitorRow {
  path: string;
  human: number;
  ai: number;
  total: number;
}

export interface VisitorRange {
  totals: { human: number; ai: number; total: number };
  rows: VisitorRow[];
}

const DAY_MS = 86_400_000;
const MAX_CACHED_RANGES = 32;

/**
 * Deterministic analytics: a project has N paths; each path has counts every day derived from a hash of
 * (seed, project, path, day). A range sums its days. Rows are sorted by path, so offset pages are stable.
 */
export class AnalyticsDataSet {
  readonly #cache = new Map<string, VisitorRange>();

  constructor(private readonly seed: string) {}

  range(projectId: string, paths: number, fromMs: number, toMs: number): VisitorRange {
    const key = `${projectId}|${paths}|${fromMs}|${toMs}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const firstDay = Math.floor(fromMs / DAY_MS);
    const lastDay = Math.ceil(toMs / DAY_MS) - 1;
    const rows: VisitorRow[] = [];
    let human = 0;
    let ai = 0;
    let total = 0;
    for (let i = 0; i < paths; i++) {
      const path = pathName(i);
      const row = { path, human: 0, ai: 0, total: 0 };
      for (let day = firstDay; day <= lastDay; day++) {
        const h = fnv1a(`${this.seed}|${projectId}|${path}|${day}`);
        const dayHuman = 1 + (h % 50);
        const dayAi = (h >>> 8) % 20;
        const overlap = Math.min(dayHuman, dayAi, (h >>> 16) % 5);
        row.human += dayHuman;
        row.ai += dayAi;
        row.total += dayHuman + dayAi - overlap;
      }
      if (row.total === 0) continue;
      rows.push(row);
      human += row.human;
      ai += row.ai;
      total += row.total;
    }
    rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    // Site-wide uniques are fewer than the sum over pages; keep max(human, ai) <= total <= human + ai.
    const siteTotal = Math.max(human, ai, Math.round(total * 0.9));
    const range = { totals: { human, ai, total: Math.min(siteTotal, human + ai) }, rows };
    if (this.#cache.size >= MAX_CACHED_RANGES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, range);
    return range;
  }
}

function pathName(index: number): string {
  const section = ['guides', 'api', 'reference', 'changelog', 'quickstart'][index % 5] ?? 'docs';
  return `/${section}/page-${String(index).padStart(6, '0')}`;
}
