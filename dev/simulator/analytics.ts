import { fnv1a, mix32 } from './hash';

export const DAY_MS = 86_400_000;

/**
 * Each path goes live on a day in the two years up to this one (days since the epoch) and has no visitors
 * before it, so old ranges omit some paths while any range from 2023-12-31 on lists every path.
 */
const LAUNCH_LAST_DAY = Date.UTC(2023, 11, 31) / DAY_MS;
const LAUNCH_SPREAD_DAYS = 730;
/** A visitor who reads several pages counts once site-wide, so site uniques are below the sum over paths. */
const SITE_SHARE = 0.8;
/** Computed ranges are kept (least recently used dropped first) up to this many rows in all. */
const MAX_CACHED_ROWS = 1_000_000;
const SECTIONS = ['guides', 'api', 'reference', 'changelog', 'quickstart'] as const;

export interface VisitorCounts {
  human: number;
  ai: number;
  total: number;
}

export interface VisitorRow extends VisitorCounts {
  path: string;
}

interface ProjectPaths {
  paths: readonly string[];
  /** Per path, the hash of (seed, project, path) that its daily counts derive from. */
  seeds: Uint32Array;
}

export interface VisitorRange {
  /** Site-wide uniques: max(human, ai) <= total <= human + ai. */
  totals: VisitorCounts;
  /** Paths with visitors in the range, sorted by path. */
  rows: readonly VisitorRow[];
}

/**
 * A deterministic analytics data set: a project has N paths; each path has human, AI and deduplicated total
 * counts every UTC day, derived from a hash of (seed, project, path, day). A range's counts are the sum over
 * the days it overlaps. A range is computed once and cached, so paging through it costs a slice per page.
 */
export class AnalyticsDataSet {
  readonly #ranges = new Map<string, VisitorRange>();
  #cachedRows = 0;
  readonly #sortedPaths = new Map<number, readonly string[]>();
  readonly #projects = new Map<string, ProjectPaths>();

  constructor(private readonly seed: string) {}

  range(projectId: string, pathCount: number, fromMs: number, toMs: number): VisitorRange {
    const firstDay = Math.floor(fromMs / DAY_MS);
    const lastDay = Math.ceil(toMs / DAY_MS) - 1;
    const key = `${projectId}\u0000${pathCount}\u0000${firstDay}\u0000${lastDay}`;
    const cached = this.#ranges.get(key);
    if (cached) {
      this.#ranges.delete(key);
      this.#ranges.set(key, cached);
      return cached;
    }
    const range = this.#compute(this.#project(projectId, pathCount), firstDay, lastDay);
    this.#remember(key, range);
    return range;
  }

  clear(): void {
    this.#ranges.clear();
    this.#cachedRows = 0;
  }

  #compute(project: ProjectPaths, firstDay: number, lastDay: number): VisitorRange {
    const rows: VisitorRow[] = [];
    const sum = { human: 0, ai: 0, total: 0 };
    const max = { human: 0, ai: 0, total: 0 };
    for (const [i, path] of project.paths.entries()) {
      const pathSeed = project.seeds[i] ?? 0;
      const launchDay = LAUNCH_LAST_DAY - (pathSeed % LAUNCH_SPREAD_DAYS);
      const scale = 1 + ((pathSeed >>> 12) % 40);
      let human = 0;
      let ai = 0;
      let total = 0;
      for (let day = Math.max(firstDay, launchDay); day <= lastDay; day++) {
        const h = mix32(pathSeed ^ Math.imul(day, 0x9e3779b1));
        // Bit fields of the hash scaled by multiply-and-shift: uniform enough, and no division in this hot loop.
        const dayHuman = 1 + (((h & 0xffff) * 2 * scale) >>> 16);
        const dayAi = (((h >>> 16) & 0x3ff) * (scale + 1)) >>> 10;
        const overlap = ((h >>> 26) * (Math.min(dayHuman, dayAi) + 1)) >>> 6;
        human += dayHuman;
        ai += dayAi;
        total += dayHuman + dayAi - overlap;
      }
      if (total === 0) continue;
      rows.push({ path, human, ai, total });
      sum.human += human;
      sum.ai += ai;
      sum.total += total;
      max.human = Math.max(max.human, human);
      max.ai = Math.max(max.ai, ai);
      max.total = Math.max(max.total, total);
    }
    const human = Math.max(max.human, Math.round(sum.human * SITE_SHARE));
    const ai = Math.max(max.ai, Math.round(sum.ai * SITE_SHARE));
    const total = Math.min(human + ai, Math.max(human, ai, max.total, Math.round(sum.total * SITE_SHARE)));
    return { totals: { human, ai, total }, rows };
  }

  #project(projectId: string, count: number): ProjectPaths {
    const key = `${projectId}\u0000${count}`;
    let project = this.#projects.get(key);
    if (!project) {
      let paths = this.#sortedPaths.get(count);
      if (!paths) {
        paths = sortedPathNames(count);
        if (this.#sortedPaths.size >= 4) this.#sortedPaths.clear();
        this.#sortedPaths.set(count, paths);
      }
      const seeds = Uint32Array.from(paths, (path) => fnv1a(`${this.seed}|${projectId}|${path}`));
      project = { paths, seeds };
      if (this.#projects.size >= 16) this.#projects.clear();
      this.#projects.set(key, project);
    }
    return project;
  }

  #remember(key: string, range: VisitorRange): void {
    for (const [oldKey, old] of this.#ranges) {
      if (this.#cachedRows + range.rows.length <= MAX_CACHED_ROWS) break;
      this.#ranges.delete(oldKey);
      this.#cachedRows -= old.rows.length;
    }
    this.#ranges.set(key, range);
    this.#cachedRows += range.rows.length;
  }
}

function pathName(index: number): string {
  return `/${SECTIONS[index % SECTIONS.length] ?? 'docs'}/page-${String(index).padStart(6, '0')}`;
}

/**
 * The first `count` path names in code-unit order, without sorting: sections in alphabetical order, and within
 * one the indices ascending (zero-padded to six digits, which MAX_VISITOR_PATHS keeps sufficient).
 */
function sortedPathNames(count: number): string[] {
  const sections = SECTIONS.map((name, offset) => ({ name, offset })).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  const names: string[] = [];
  for (const { offset } of sections) {
    for (let i = offset; i < count; i += SECTIONS.length) names.push(pathName(i));
  }
  return names;
}
