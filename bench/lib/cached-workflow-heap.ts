import {
  child,
  dominatedChildren,
  edgeName,
  nodeName,
  nodeType,
  NONE,
  type HeapGraph,
} from './heap-snapshot';
import { median } from './stats';

/**
 * What one cached workflow retains in the workflow thread's heap (the SDK's reusable V8 context), split by
 * what holds it. A workflow's objects are the dominator subtree of its `ReusableVMWorkflow`. Within it, each
 * object goes to the nearest module record of the workflow's module cache (the modules the sandbox evaluated
 * again for this workflow; nearest: fewest references from the record), or else to the `Activator`'s field
 * (or the workflow object's) that leads to it: promises and handlers are the run's state.
 */
export interface CachedWorkflowHeap {
  workflowType: string;
  workflows: number;
  /** Median retained bytes of one workflow of the type. */
  retainedBytes: number;
  /** Per part, the median over the type's workflows, in bytes. */
  parts: Map<string, number>;
}

export const PROJECT_MODULES = "modules: this project's, concatenated";

/** A module record's key (webpack's module id) to the part it is counted in. */
export function modulePart(moduleId: string): string {
  const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(moduleId)?.[1];
  if (packageName) return `modules: ${packageName}`;
  // The bundle's entry, this project's workflow modules concatenated into it (WORKFLOW_BUNDLER_OPTIONS).
  if (/^\.\/(src|bench)\//.test(moduleId)) return PROJECT_MODULES;
  return 'modules: other (webpack runtime ids)';
}

function moduleRecords(g: HeapGraph, moduleCache: number): [string, number][] {
  const table = child(g, moduleCache, 'table');
  const records: [string, number][] = [];
  let key: string | null = null;
  for (let e = g.firstEdge[table] as number; e < (g.firstEdge[table + 1] as number); e += 1) {
    const to = g.edgeTo[e] as number;
    if (nodeType(g, to) === 'string' || nodeType(g, to) === 'concatenated string') key = nodeName(g, to);
    else if (key !== null && nodeType(g, to) === 'object') {
      records.push([key, to]);
      key = null;
    }
  }
  return records;
}

function partsOf(g: HeapGraph, workflow: number, children: Map<number, number[]>): Map<string, number> {
  const owner = new Map<number, string>();
  const subtree: number[] = [];
  for (const stack = [workflow]; stack.length > 0;) {
    const n = stack.pop() as number;
    owner.set(n, '');
    subtree.push(n);
    for (const c of children.get(n) ?? []) stack.push(c);
  }
  const activator = child(g, workflow, 'activator');
  const weak = g.edgeTypes.indexOf('weak');
  // Nearest module record first, breadth-first over the workflow's own objects.
  let wave: number[] = [];
  for (const [moduleId, record] of moduleRecords(g, child(g, activator, 'moduleCache'))) {
    if (owner.get(record) !== '') continue;
    owner.set(record, modulePart(moduleId));
    wave.push(record);
  }
  while (wave.length > 0) {
    const next: number[] = [];
    for (const n of wave) {
      for (let e = g.firstEdge[n] as number; e < (g.firstEdge[n + 1] as number); e += 1) {
        const to = g.edgeTo[e] as number;
        if (g.edgeType[e] === weak || owner.get(to) !== '') continue;
        owner.set(to, owner.get(n) as string);
        next.push(to);
      }
    }
    wave = next;
  }
  const parts = new Map<string, number>();
  for (const n of subtree) {
    let part = owner.get(n) as string;
    if (part === '') part = fieldPart(g, n, workflow, activator);
    parts.set(part, (parts.get(part) ?? 0) + (g.selfSize[n] as number));
  }
  return parts;
}

/** The field of the Activator (or of the workflow object) whose dominator subtree holds `n`. */
function fieldPart(g: HeapGraph, n: number, workflow: number, activator: number): string {
  if (n === workflow || n === activator) return 'Activator and workflow objects';
  let below = n;
  while (g.idom[below] !== activator && g.idom[below] !== workflow) below = g.idom[below] as number;
  const holder = g.idom[below] as number;
  for (let e = g.firstEdge[holder] as number; e < (g.firstEdge[holder + 1] as number); e += 1) {
    if (g.edgeTo[e] !== below) continue;
    const name = edgeName(g, e);
    return holder === activator ? `Activator.${name}` : `workflow.${name}`;
  }
  return holder === activator ? 'Activator: held by several fields' : 'workflow: held by several fields';
}

/** Every cached workflow of the snapshot (one thread's), grouped by workflow type. */
export function cachedWorkflowHeaps(g: HeapGraph): CachedWorkflowHeap[] {
  const children = dominatedChildren(g);
  const byType = new Map<string, { retained: number[]; parts: Map<string, number>[] }>();
  for (let n = 0; n < g.nodeCount; n += 1) {
    if (nodeType(g, n) !== 'object' || nodeName(g, n) !== 'ReusableVMWorkflow') continue;
    const info = child(g, child(g, n, 'activator'), 'info');
    const type = info === NONE ? 'unknown' : nodeName(g, child(g, info, 'workflowType'));
    const entry = byType.get(type) ?? { retained: [], parts: [] };
    entry.retained.push(g.retained[n] as number);
    entry.parts.push(partsOf(g, n, children));
    byType.set(type, entry);
  }
  return [...byType].map(([workflowType, { retained, parts }]) => {
    const names = new Set(parts.flatMap((p) => [...p.keys()]));
    const medians = new Map([...names].map((name) => [name, median(parts.map((p) => p.get(name) ?? 0))]));
    return { workflowType, workflows: retained.length, retainedBytes: median(retained), parts: medians };
  });
}
