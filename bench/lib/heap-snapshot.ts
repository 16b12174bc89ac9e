import fs from 'node:fs';

/**
 * A V8 heap snapshot (.heapsnapshot) read into typed arrays, with its dominator tree and retained sizes, as
 * Chrome DevTools computes them. Read from bytes, not JSON.parse: a worker holding hundreds of cached
 * workflows writes snapshots larger than V8's longest string.
 */
export interface HeapGraph {
  nodeCount: number;
  /** Per node: type index, name (string index), self size, first edge and edge count. */
  type: Uint8Array;
  name: Uint32Array;
  selfSize: Float64Array;
  firstEdge: Uint32Array;
  edgeType: Uint8Array;
  edgeName: Uint32Array;
  edgeTo: Uint32Array;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  /** Immediate dominator of each node; the root's is itself; unreachable nodes: NONE. */
  idom: Uint32Array;
  retained: Float64Array;
}

export const NONE = 0xffffffff;

interface SnapshotMeta {
  node_fields: string[];
  node_types: [string[]];
  edge_fields: string[];
  edge_types: [string[]];
}

function numbersAt(bytes: Buffer, key: string, length: number): Uint32Array {
  const start = bytes.indexOf(`"${key}":[`);
  if (start < 0) throw new Error(`heap snapshot without "${key}"`);
  const values = new Uint32Array(length);
  let count = 0;
  let current = 0;
  let inNumber = false;
  for (let at = start + key.length + 4; ; at += 1) {
    const c = bytes[at] as number;
    if (c >= 48 && c <= 57) {
      current = current * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) values[count++] = current;
      current = 0;
      inNumber = false;
      if (c === 93) break; // ]
    }
  }
  if (count !== length) throw new Error(`heap snapshot: ${count} values in "${key}", ${length} announced`);
  return values;
}

export function readHeapSnapshot(file: string): HeapGraph {
  const bytes = fs.readFileSync(file);
  const nodesAt = bytes.indexOf('"nodes":[');
  const header = JSON.parse(`${bytes.subarray(0, nodesAt).toString('utf8').replace(/,\s*$/, '')}}`) as {
    snapshot: { meta: SnapshotMeta; node_count: number; edge_count: number };
  };
  const meta = header.snapshot.meta;
  const nodes = numbersAt(bytes, 'nodes', header.snapshot.node_count * meta.node_fields.length);
  const edges = numbersAt(bytes, 'edges', header.snapshot.edge_count * meta.edge_fields.length);
  const stringsAt = bytes.indexOf('"strings":[');
  const strings = (JSON.parse(`{${bytes.subarray(stringsAt).toString('utf8')}`) as { strings: string[] })
    .strings;

  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeCount = nodes.length / nf;
  const edgeCount = edges.length / ef;
  const field = (fields: string[], name: string) => fields.indexOf(name);
  const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((n) =>
    field(meta.node_fields, n),
  ) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((n) => field(meta.edge_fields, n)) as [
    number,
    number,
    number,
  ];
  const graph: HeapGraph = {
    nodeCount,
    type: new Uint8Array(nodeCount),
    name: new Uint32Array(nodeCount),
    selfSize: new Float64Array(nodeCount),
    firstEdge: new Uint32Array(nodeCount + 1),
    edgeType: new Uint8Array(edgeCount),
    edgeName: new Uint32Array(edgeCount),
    edgeTo: new Uint32Array(edgeCount),
    strings,
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    idom: new Uint32Array(nodeCount).fill(NONE),
    retained: new Float64Array(nodeCount),
  };
  let edge = 0;
  for (let n = 0; n < nodeCount; n += 1) {
    graph.type[n] = nodes[n * nf + nType] as number;
    graph.name[n] = nodes[n * nf + nName] as number;
    graph.selfSize[n] = nodes[n * nf + nSize] as number;
    graph.firstEdge[n] = edge;
    edge += nodes[n * nf + nEdges] as number;
  }
  graph.firstEdge[nodeCount] = edge;
  for (let e = 0; e < edgeCount; e += 1) {
    graph.edgeType[e] = edges[e * ef + eType] as number;
    graph.edgeName[e] = edges[e * ef + eName] as number;
    graph.edgeTo[e] = (edges[e * ef + eTo] as number) / nf;
  }
  computeDominators(graph);
  return graph;
}

/** Cooper, Harvey and Kennedy's iterative algorithm over a depth-first postorder; weak edges hold nothing. */
function computeDominators(g: HeapGraph): void {
  const weak = g.edgeTypes.indexOf('weak');
  const shortcut = g.edgeTypes.indexOf('shortcut');
  const holds = (e: number) => g.edgeType[e] !== weak && g.edgeType[e] !== shortcut;
  const order = new Uint32Array(g.nodeCount).fill(NONE); // node -> postorder number
  const byOrder = new Uint32Array(g.nodeCount); // postorder number -> node
  const stack = new Uint32Array(g.nodeCount);
  const nextEdge = new Uint32Array(g.nodeCount);
  const visited = new Uint8Array(g.nodeCount);
  let top = 0;
  let count = 0;
  stack[0] = 0;
  visited[0] = 1;
  nextEdge[0] = g.firstEdge[0] as number;
  while (top >= 0) {
    const n = stack[top] as number;
    const end = g.firstEdge[n + 1] as number;
    let e = nextEdge[n] as number;
    while (e < end && (!holds(e) || visited[g.edgeTo[e] as number])) e += 1;
    if (e < end) {
      nextEdge[n] = e + 1;
      const to = g.edgeTo[e] as number;
      visited[to] = 1;
      nextEdge[to] = g.firstEdge[to] as number;
      stack[++top] = to;
    } else {
      order[n] = count;
      byOrder[count] = n;
      count += 1;
      top -= 1;
    }
  }
  // Predecessors of reachable nodes, as postorder numbers (compressed rows).
  const predCount = new Uint32Array(count + 1);
  for (let n = 0; n < g.nodeCount; n += 1) {
    if (order[n] === NONE) continue;
    for (let e = g.firstEdge[n] as number; e < (g.firstEdge[n + 1] as number); e += 1) {
      if (holds(e)) (predCount[(order[g.edgeTo[e] as number] as number) + 1] as number) += 1;
    }
  }
  for (let i = 0; i < count; i += 1)
    predCount[i + 1] = (predCount[i + 1] as number) + (predCount[i] as number);
  const preds = new Uint32Array(predCount[count] as number);
  const fill = predCount.slice(0, count);
  for (let n = 0; n < g.nodeCount; n += 1) {
    const from = order[n] as number;
    if (from === NONE) continue;
    for (let e = g.firstEdge[n] as number; e < (g.firstEdge[n + 1] as number); e += 1) {
      if (!holds(e)) continue;
      const to = order[g.edgeTo[e] as number] as number;
      preds[(fill[to] as number)++] = from;
    }
  }
  const root = count - 1;
  const dom = new Uint32Array(count).fill(NONE);
  dom[root] = root;
  for (let changed = true; changed;) {
    changed = false;
    for (let b = root - 1; b >= 0; b -= 1) {
      let idom = NONE;
      for (let p = predCount[b] as number; p < (predCount[b + 1] as number); p += 1) {
        let other = preds[p] as number;
        if (dom[other] === NONE) continue;
        if (idom === NONE) {
          idom = other;
          continue;
        }
        let finger = idom;
        while (finger !== other) {
          while (finger < other) finger = dom[finger] as number;
          while (other < finger) other = dom[other] as number;
        }
        idom = finger;
      }
      if (idom !== NONE && dom[b] !== idom) {
        dom[b] = idom;
        changed = true;
      }
    }
  }
  for (let b = 0; b < count; b += 1) {
    const n = byOrder[b] as number;
    g.idom[n] = byOrder[dom[b] as number] as number;
    g.retained[n] = (g.retained[n] as number) + (g.selfSize[n] as number);
    if (b !== root) g.retained[g.idom[n]] = (g.retained[g.idom[n]] as number) + g.retained[n];
  }
}

export function nodeName(g: HeapGraph, n: number): string {
  return g.strings[g.name[n] as number] ?? '';
}

export function nodeType(g: HeapGraph, n: number): string {
  return g.nodeTypes[g.type[n] as number] ?? '';
}

/** The edge's name: a property name, or an element's index. */
export function edgeName(g: HeapGraph, e: number): string {
  const type = g.edgeTypes[g.edgeType[e] as number];
  return type === 'element' || type === 'hidden'
    ? String(g.edgeName[e])
    : (g.strings[g.edgeName[e] as number] ?? '');
}

/** The node an edge named `name` leads to, or NONE. */
export function child(g: HeapGraph, n: number, name: string): number {
  for (let e = g.firstEdge[n] as number; e < (g.firstEdge[n + 1] as number); e += 1) {
    if (edgeName(g, e) === name) return g.edgeTo[e] as number;
  }
  return NONE;
}

/** Nodes the dominator tree places directly under each node. */
export function dominatedChildren(g: HeapGraph): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (let n = 1; n < g.nodeCount; n += 1) {
    const d = g.idom[n] as number;
    if (d === NONE || d === n) continue;
    const list = children.get(d);
    if (list) list.push(n);
    else children.set(d, [n]);
  }
  return children;
}
