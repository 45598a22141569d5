// Hostile kubeconfig texts for tests and the bench: anchor-padded, alias bombs, thousands of contexts, thousands of
// keys; each a valid kubeconfig of one context at heart, padded to the size asked for.
//
// Guarantees: pure and deterministic (the same arguments give the same text); every text is at most `bytes` long
// (ASCII, so as many UTF-8 bytes) and within a few hundred bytes of it, and its one real context is named `name`
// and is its current-context.

/** The one real context a hostile text carries (a server the hub may reach, and its credentials). */
export interface HostileTarget {
  /** The context's name, also its current-context. */
  name: string;
  server: string;
  /** PEM of the server's CA; left out when not given. */
  caPem?: string;
  token: string;
}

/** The shapes {@linkcode hostileKubeconfig} writes. */
export type HostileShape =
  /** One anchor every 43 bytes, each aliased once (1 MiB: ~24,000): quadratic in the `yaml` package. */
  | "anchors"
  /** A billion-laughs bomb whose levels are as wide as the size allows. */
  | "alias-bomb"
  /** `count` contexts, users and clusters (the size argument is ignored). */
  | "contexts"
  /** One mapping with a key every 14 bytes: the `yaml` package checks each key against every earlier one. */
  | "keys";

/** The kubeconfig of `target` alone, as block YAML, ending with a newline. */
export function baseKubeconfig(target: HostileTarget): string {
  const ca = target.caPem ? `    certificate-authority-data: ${btoa(target.caPem)}\n` : "";
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${target.name}`,
    "  cluster:",
    `    server: ${target.server}`,
    ca.trimEnd(),
    "users:",
    `- name: ${target.name}`,
    "  user:",
    `    token: ${target.token}`,
    "contexts:",
    `- name: ${target.name}`,
    "  context:",
    `    cluster: ${target.name}`,
    `    user: ${target.name}`,
    `current-context: ${target.name}`,
    "",
  ].filter((l, i, all) => l !== "" || i === all.length - 1).join("\n");
}

/**
 * A kubeconfig of shape `shape`, at most `bytes` long (for `contexts`, `bytes` is the number of contexts). Throws when
 * `bytes` is too small to hold the base kubeconfig.
 */
export function hostileKubeconfig(shape: HostileShape, target: HostileTarget, bytes: number): string {
  const base = baseKubeconfig(target);
  if (shape === "contexts") return manyContexts(target, bytes);
  const room = bytes - base.length;
  if (room < 64) throw new Error(`${bytes} bytes cannot hold the base kubeconfig (${base.length} bytes) and padding`);
  return base + hostilePadding(shape, room);
}

/** Top-level keys of at most `room` bytes to append to any block-style kubeconfig: anchor padding or an alias bomb. */
export function hostilePadding(shape: "anchors" | "alias-bomb" | "keys", room: number): string {
  return shape === "anchors" ? anchorPadding(room) : shape === "alias-bomb" ? aliasBomb(room) : keyPadding(room);
}

/** `x-pad:` then `- &anchor-N [value1]` / `- *anchor-N` pairs, 43 bytes a pair with six-digit numbers. */
function anchorPadding(room: number): string {
  const parts = ["x-pad:\n"];
  let used = parts[0].length;
  for (let i = 0;; i++) {
    const n = String(i).padStart(6, "0");
    const pair = `- &anchor-${n} [value1]\n- *anchor-${n}\n`;
    if (used + pair.length > room) break;
    parts.push(pair);
    used += pair.length;
  }
  return parts.join("");
}

/** `x-lolN: &lolN [*lolN-1, …]` levels of equal width, the width chosen so ten levels fill `room`. */
function aliasBomb(room: number): string {
  const levels = 10;
  // Each item with its comma takes 6 bytes (`*lol1,`, `"lol",`); the heads and brackets take the rest.
  const width = Math.max(2, Math.floor((room - levels * 20) / levels / 6));
  const lines = [`x-lol0: &lol0 [${Array(width).fill('"lol"').join(",")}]`];
  let used = lines[0].length + 1;
  for (let i = 1; i < levels; i++) {
    const item = `*lol${i - 1}`;
    const head = `x-lol${i}: &lol${i} [`;
    const fit = Math.min(width, Math.floor((room - used - head.length - 2) / (item.length + 1)));
    if (fit < 1) break;
    const line = `${head}${Array(fit).fill(item).join(",")}]`;
    lines.push(line);
    used += line.length + 1;
  }
  return lines.join("\n") + "\n";
}

/** `x-keys:` then `  kNNNNNNN: 1` lines. */
function keyPadding(room: number): string {
  const parts = ["x-keys:\n"];
  let used = parts[0].length;
  for (let i = 0;; i++) {
    const line = `  k${String(i).padStart(7, "0")}: 1\n`;
    if (used + line.length > room) break;
    parts.push(line);
    used += line.length;
  }
  return parts.join("");
}

/** `count` contexts, each with its own user and cluster; the first is `target` itself, the others short names and tokens
 * (5,000 fit in a Secret). */
function manyContexts(target: HostileTarget, count: number): string {
  const clusters: string[] = [];
  const users: string[] = [];
  const contexts: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = i === 0 ? target.name : `c${i}`;
    clusters.push(`- name: ${name}\n  cluster:\n    server: ${target.server}\n`);
    users.push(`- name: ${name}\n  user:\n    token: ${i === 0 ? target.token : `t${i}`}\n`);
    contexts.push(`- name: ${name}\n  context:\n    cluster: ${name}\n    user: ${name}\n`);
  }
  return [
    "apiVersion: v1\nkind: Config\n",
    "clusters:\n",
    ...clusters,
    "users:\n",
    ...users,
    "contexts:\n",
    ...contexts,
    `current-context: ${target.name}\n`,
  ].join("");
}
