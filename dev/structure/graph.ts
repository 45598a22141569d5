// Directed graph algorithms of the structure drawing: strongly connected components (Tarjan) and floors (longest
// path layering of the components' DAG).

/** A directed graph: each node's successors. Nodes missing as keys have none. */
export type Graph = Map<string, Set<string>>;

/**
 * The strongly connected components of `graph`, each sorted, in reverse topological order (a component comes after
 * every component it reaches). Iterative, so deep graphs do not overflow the stack.
 */
export function stronglyConnected(graph: Graph): string[][] {
  const nodes = new Set<string>(graph.keys());
  for (const succ of graph.values()) for (const s of succ) nodes.add(s);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  for (const root of [...nodes].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; succ: string[]; at: number }[] = [];
    const open = (node: string) => {
      index.set(node, next);
      low.set(node, next);
      next++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, succ: [...(graph.get(node) ?? [])].sort(), at: 0 });
    };
    open(root);
    while (work.length > 0) {
      const top = work[work.length - 1];
      if (top.at < top.succ.length) {
        const s = top.succ[top.at++];
        if (!index.has(s)) open(s);
        else if (onStack.has(s)) low.set(top.node, Math.min(low.get(top.node)!, index.get(s)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let v: string;
        do {
          v = stack.pop()!;
          onStack.delete(v);
          comp.push(v);
        } while (v !== top.node);
        out.push(comp.sort());
      }
    }
  }
  return out;
}

/** Each node's floor, and the edges that run inside a cycle (so against any layering). */
export interface Floors {
  /** 0 for a node that imports nothing in the graph; otherwise one above the highest floor it reaches directly. */
  floor: Map<string, number>;
  /** Number of floors (highest floor + 1; 0 for an empty graph). */
  count: number;
  /** `[from, to]` edges between two nodes of one strongly connected component, sorted. */
  backEdges: [string, string][];
}

/**
 * Longest-path layering: every edge goes from a higher floor down to a lower one, except edges inside a cycle, which
 * put both ends on one floor and are reported as `backEdges` (the arrows that run back up).
 */
export function floors(graph: Graph): Floors {
  const comps = stronglyConnected(graph); // reverse topological: successors first
  const compOf = new Map<string, number>();
  comps.forEach((c, i) => c.forEach((n) => compOf.set(n, i)));
  const compFloor: number[] = [];
  const backEdges: [string, string][] = [];
  comps.forEach((comp, i) => {
    let f = 0;
    for (const n of comp) {
      for (const s of graph.get(n) ?? []) {
        const j = compOf.get(s)!;
        if (j === i) {
          if (n !== s) backEdges.push([n, s]);
        } else f = Math.max(f, compFloor[j] + 1);
      }
    }
    compFloor[i] = f;
  });
  const floor = new Map<string, number>();
  for (const [n, i] of compOf) floor.set(n, compFloor[i]);
  const count = comps.length === 0 ? 0 : Math.max(...compFloor) + 1;
  backEdges.sort((a, b) => (a[0] + " " + a[1]).localeCompare(b[0] + " " + b[1]));
  return { floor, count, backEdges };
}
