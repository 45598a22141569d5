// Pure arithmetic on shard ownership maps (cluster → owner): how many moved, how they are spread.

/** The fraction of `clusters` whose owner differs between `before` and `after`. */
export const moved = (before: Record<string, string>, after: Record<string, string>, clusters: string[]) =>
  clusters.filter((c) => before[c] !== after[c]).length / clusters.length;

/** Clusters per owner, largest first. */
export const spread = (owners: Record<string, string>): number[] => {
  const n = new Map<string, number>();
  for (const o of Object.values(owners)) n.set(o, (n.get(o) ?? 0) + 1);
  return [...n.values()].sort((a, b) => b - a);
};

/** Each moved cluster as `cluster old→new`, and how many did not go to `joined`. */
export function moves(
  before: Record<string, string>,
  after: Record<string, string>,
  clusters: string[],
  joined?: string,
) {
  const list = clusters.filter((c) => before[c] !== after[c]);
  return {
    text: list.map((c) => `${c} ${before[c]}→${after[c]}`).join(", "),
    notToJoined: list.filter((c) => after[c] !== joined).length,
  };
}
