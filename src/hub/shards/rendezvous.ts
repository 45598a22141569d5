// Weighted rendezvous (highest-random-weight) hashing: which peer owns a cluster, with weights that really work.

/** A candidate owner: its identity and its relative capacity. */
export interface RendezvousPeer {
  identity: string;
  /** Relative share; a peer of weight 2 gets about twice the clusters of a peer of weight 1. Must be > 0. */
  weight: number;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;
const ENCODER = new TextEncoder();

/** FNV-1a, 64-bit, over the UTF-8 bytes of `text` (BigInt arithmetic masked to 64 bits: no overflow). */
export function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of ENCODER.encode(text)) {
    h ^= BigInt(byte);
    h = (h * FNV_PRIME) & MASK64;
  }
  return h;
}

/** splitmix64's finaliser: spreads FNV's weak low-entropy inputs (short, similar names) over all 64 bits. */
function mix64(x: bigint): bigint {
  x = ((x ^ (x >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  x = ((x ^ (x >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return x ^ (x >> 31n);
}

/**
 * The hash of (cluster, peer) scaled into the open interval (0, 1): the top 53 bits, plus one half, over 2^53.
 * Never 0 (ln 0 = −∞) and never 1 (ln 1 = 0, a division by zero).
 */
export function unitHash(cluster: string, peer: string): number {
  // A NUL separator: ("ab","c") and ("a","bc") hash apart.
  const h = mix64(fnv1a64(`${cluster}\u0000${peer}`));
  return (Number(h >> 11n) + 0.5) / 2 ** 53;
}

/**
 * The peer's score for a cluster: −w / ln(u). The highest score wins; each peer wins with probability
 * w / Σw (the exponential-race form of weighted rendezvous hashing), and adding or removing a peer only moves
 * the clusters it wins or won.
 */
export function rendezvousScore(cluster: string, peer: RendezvousPeer): number {
  return -peer.weight / Math.log(unitHash(cluster, peer.identity));
}

/**
 * The owner of `cluster` among `peers`, or undefined when there is none. Ties (practically impossible) go to the
 * smaller identity, so every replica computes the same owner from the same peer list, in any order.
 */
export function rendezvousOwner(cluster: string, peers: readonly RendezvousPeer[]): string | undefined {
  let best: { identity: string; score: number } | undefined;
  for (const p of peers) {
    if (!(p.weight > 0)) continue;
    const score = rendezvousScore(cluster, p);
    if (!best || score > best.score || (score === best.score && p.identity < best.identity)) {
      best = { identity: p.identity, score };
    }
  }
  return best?.identity;
}
