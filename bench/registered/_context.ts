// What the phases of bench/registered/registered_clusters.ts share: the in-process hub and its registry, the admin client, the
// bench's namespace and cluster folder, and the small helpers they all use.

import { stringify as toYaml } from "yaml";
import type { Hub } from "../../src/hub/mod.ts";
import type { RegisteredClusters } from "../../src/hub/providers/mod.ts";
import type { KubeClient } from "../../src/kube/mod.ts";
import { type ClusterEndpoint, localEndpoint } from "../../dev/support/cluster_api.ts";

/** The running bench, as every phase sees it. */
export interface RegisteredContext {
  /** The JSON the bench prints and writes (`--out`): each phase adds its keys. */
  results: Record<string, unknown>;
  say: (line: string) => void;
  /** The bench's namespace in prod (the registration Secrets) and staging (the rotation objects). */
  ns: string;
  /** The hub's --cluster-dir. */
  clusterDir: string;
  hub: Hub;
  registered: RegisteredClusters;
  /** An admin client of prod. */
  admin: KubeClient;
  /** Live timers of this process (bench/lib/live_timers.ts). */
  liveTimers: Set<unknown>;
  staging: ClusterEndpoint;
  stagingPort: number;
  /** The hub's state of cluster `name`, undefined once it is unregistered. */
  state: (name: string) => string | undefined;
  /** The hub's metric series (one line each, no comments). */
  series: () => Promise<string[]>;
  /** Writes `text` to `path` through a rename (the folder provider never sees half a file). */
  writeAtomic: (path: string, text: string) => Promise<void>;
  /** A kubeconfig Secret for the Secret provider, in the bench's namespace, as JSON. */
  secretManifest: (name: string, text: string) => string;
}

/** The parts of a {@linkcode RegisteredContext} its helpers are made from. */
export type RegisteredParts = Omit<RegisteredContext, "state" | "series" | "writeAtomic" | "secretManifest">;

/** A context from `parts`, with its helpers; `dir` holds the staged files of writeAtomic. */
export function registeredContext(parts: RegisteredParts, dir: string): RegisteredContext {
  const { hub, ns } = parts;
  return {
    ...parts,
    state: (name: string) => hub.health().clusters[name]?.state,
    series: async () =>
      (await hub.metrics.registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#")),
    writeAtomic: async (path: string, text: string) => {
      const tmp = `${dir}/.staged-${crypto.randomUUID()}`;
      await Deno.writeTextFile(tmp, text, { mode: 0o600 });
      await Deno.rename(tmp, path);
    },
    secretManifest: (name: string, text: string) =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
        data: { kubeconfig: btoa(text) },
      }),
  };
}

/** A kubeconfig for local cluster `context` named `name` with `token` (and `server` instead of its own, if given). */
export function kubeconfig(context: string, name: string, token: string, server?: string): string {
  const c = localEndpoint(context);
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: server ?? c.server, "certificate-authority-data": btoa(c.caPem) } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}

/** Polls `check` every `everyMs` (the hub shares this thread: polling must stay cheap) until it holds. */
export async function until(check: () => boolean, what: string, timeoutMs = 120_000, everyMs = 5): Promise<number> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`hang guard: ${what} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return (performance.now() - t0) / 1000;
}

/** Median, min and max of `xs`, to 3 decimals. */
export const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { median: r(s[Math.floor(s.length / 2)]), min: r(s[0]), max: r(s[s.length - 1]) };
};
