// Bounded-load weighted rendezvous hashing: rendezvous scores, with each peer capped near its weighted fair share.

import { type RendezvousPeer, unitHash } from "./rendezvous.ts";

/** Clusters a peer may hold above its weighted fair share (rounded up). */
export const BOUNDED_LOAD_SLACK = 1;

/**
 * How many of `clusters` a peer of `weight` may own among peers weighing `totalWeight` in all: its weighted fair share
 * rounded up, plus `slack`.
 */
export function boundedCapacity(clusters: number, weight: number, totalWeight: number, slack = BOUNDED_LOAD_SLACK) {
  if (!(weight > 0) || !(totalWeight > 0)) return 0;
  // The small epsilon keeps 30 × 1/3 at 10, not 10.000000000000002 → 11.
  return Math.ceil((clusters * weight) / totalWeight - 1e-9) + slack;
}

/** Options of {@linkcode boundedRendezvous}. */
export interface BoundedRendezvousOptions {
  /** Default BOUNDED_LOAD_SLACK (1). */
  slack?: number;
  /** ln(unitHash(cluster, peer)); a cache may be passed in (ShardTable's), by default computed. */
  logU?: (cluster: string, peer: string) => number;
}

/**
 * Every cluster's owner among `peers`: the same rendezvous score as plain HRW (−w / ln u), but every peer is capped at
 * `boundedCapacity` (⌈n·w/W⌉ + slack), so a few dozen clusters spread as evenly as thousands do.
 *
 * The rule: all (cluster, peer) pairs are taken from the highest score down; a pair assigns its cluster to its peer
 * when the cluster has no owner yet and the peer is below its cap. With no cap reached this is exactly plain HRW
 * (each cluster goes to its highest-scoring peer); a cap only diverts the clusters a peer scores lowest among the
 * ones it would win.
 *
 * Guarantees:
 * - a pure function of the cluster names and the peers (identity, weight): every replica that sees the same ones
 *   computes the same owners, whatever the order of either list (ties, practically impossible, go to the smaller
 *   cluster name, then the smaller identity);
 * - every cluster gets an owner when there is a peer of weight > 0 (the caps add up to at least n); no peer owns more
 *   than its cap; peers of weight ≤ 0 own nothing;
 * - with 3 equal peers and 30 clusters the shares are 8 to 11; a joining peer takes at most its own cap, and other
 *   clusters move only where a cap diverted them differently (`bounded_rendezvous_test.ts` measures how often).
 *
 * Cost: n·p scores (ln u cached by the caller) and one sort of n·p pairs: about 10 ms for 5,000 clusters × 3 peers.
 */
export function boundedRendezvous(
  clusters: readonly string[],
  peers: readonly RendezvousPeer[],
  options: BoundedRendezvousOptions = {},
): Map<string, string> {
  const owners = new Map<string, string>();
  const live = [...peers].filter((p) => p.weight > 0).sort((a, b) => compare(a.identity, b.identity));
  const names = [...new Set(clusters)].sort(compare);
  const n = names.length;
  const p = live.length;
  if (n === 0 || p === 0) return owners;
  const logU = options.logU ?? ((c: string, peer: string) => Math.log(unitHash(c, peer)));
  const total = live.reduce((s, x) => s + x.weight, 0);
  const cap = live.map((x) => boundedCapacity(n, x.weight, total, options.slack));
  const score = new Float64Array(n * p);
  for (let c = 0; c < n; c++) {
    for (let j = 0; j < p; j++) score[c * p + j] = -live[j].weight / logU(names[c], live[j].identity);
  }
  // Pair index i = c·p + j; names and peers are sorted, so ties break on the cluster name, then the identity.
  const order = new Uint32Array(n * p);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => score[b] - score[a] || a - b);
  const load = new Uint32Array(p);
  const taken = new Uint8Array(n);
  let left = n;
  for (let k = 0; k < order.length && left > 0; k++) {
    const i = order[k];
    const c = (i / p) | 0;
    const j = i - c * p;
    if (taken[c] || load[j] >= cap[j]) continue;
    taken[c] = 1;
    load[j]++;
    left--;
    owners.set(names[c], live[j].identity);
  }
  return owners;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
