// Where the hub's JavaScript allocations per object come from: the hub runs in this process (`main` of
// ROOT/src/cli/main.ts, or ROOT/src/main.ts in a checkout from before the CLI moved, on the local clusters, watching
// one fresh namespace), V8's sampling heap profiler (through node:inspector, counting objects collected by minor and
// major GCs too) records every allocation while N Uuids per cluster are applied with
// `kubectl apply --server-side` and reconciled to Ok; then KB per object by function, self and inclusive (src/ only).
//
// Usage: deno run -A bench/tools/alloc_profile.ts [--root DIR] [--objects N] [--top K]
//   --root DIR   the checkout whose hub runs (default: this one; e.g. .cache/ab-9639 = `git archive 9639e27`)
// Assumptions: the local clusters are up (`deno task clusters:up`); the sampling interval (8 KiB) makes small figures
// noisy, so compare totals and the top rows, not the tail.

import { existsSync } from "node:fs";
import inspector from "node:inspector";
import { parseArgs } from "node:util";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { KUBECONFIG_PATH } from "../../dev/clusters/clusters.ts";
import { kubectlOk } from "../../dev/support/kubectl.ts";

const CLUSTERS = ["prod", "staging", "dev"];

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Sums sampled bytes per frame: self, and inclusive once per stack (recursion counted once). */
function tally(head: ProfileNode): { total: number; self: Map<string, number>; inclusive: Map<string, number> } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode, stack: Set<string>): number => {
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(src|ext|node)\//, "$1/")}:${
      f.lineNumber + 1
    }`;
    self.set(key, (self.get(key) ?? 0) + n.selfSize);
    total += n.selfSize;
    const inner = new Set(stack).add(key);
    let sum = n.selfSize;
    for (const c of n.children) sum += walk(c, inner);
    if (!stack.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
    return sum;
  };
  walk(head, new Set());
  return { total, self, inclusive };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      root: { type: "string", default: "." },
      objects: { type: "string", default: "1000" },
      top: { type: "string", default: "20" },
    },
  });
  const n = Number(values.objects), top = Number(values.top);
  if (!(n > 0) || !(top > 0)) throw new Error("--objects and --top take positive numbers");
  requireClusters();
  const ns = `alloc-profile-${crypto.randomUUID().slice(0, 8)}`;
  for (const c of CLUSTERS) await kubectlOk(c, ["create", "namespace", ns]);
  try {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const dir = values.root.replace(/\/$/, "");
    const script = existsSync(`${dir}/src/cli/main.ts`) ? "src/cli/main.ts" : "src/main.ts";
    const entry = new URL(`${dir}/${script}`, `file://${Deno.cwd()}/`).href;
    const { main: hubMain } = await import(entry);
    const args = ["--kubeconfig", KUBECONFIG_PATH, "--clusters", CLUSTERS.join(","), "--namespace", ns, "--quiet"];
    hubMain([...args, "--liveness", `http://127.0.0.1:${port}/healthz`]);
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok === true,
      "the hub's /readyz",
      60_000,
    );
    const session = new inspector.Session();
    session.connect();
    const post = (method: string, params = {}) =>
      new Promise<unknown>((resolve, reject) =>
        session.post(method, params, (err: unknown, result: unknown) => err ? reject(err) : resolve(result))
      );
    await post("HeapProfiler.enable");
    await post("HeapProfiler.startSampling", {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const docs = Array.from(
      { length: n },
      (_, i) => `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: a-${i}\n  namespace: ${ns}\n`,
    ).join("---\n");
    await Promise.all(
      CLUSTERS.map((c) => kubectlOk(c, ["apply", "--server-side", "-f", "-"], { stdin: docs, timeoutMs: 300_000 })),
    );
    const states = ['jsonpath={range .items[*]}{.status.state}{"\\n"}{end}'];
    await waitFor(
      async () => {
        const ok = await Promise.all(
          CLUSTERS.map(async (c) =>
            (await kubectlOk(c, ["get", "uuid", "-n", ns, "-o", ...states])).split("\n").filter((s) => s === "Ok")
              .length
          ),
        );
        return ok.every((k) => k === n);
      },
      `${n} Uuids Ok in each cluster`,
      300_000,
    );
    const { profile } = await post("HeapProfiler.stopSampling") as { profile: { head: ProfileNode } };
    const { total, self, inclusive } = tally(profile.head);
    const objects = n * CLUSTERS.length;
    const kb = (bytes: number) => (bytes / objects / 1024).toFixed(2);
    console.log(`${values.root}: ${(total / 1048576).toFixed(1)} MB sampled, ${kb(total)} KB per object (${objects})`);
    console.log("\n| KB/object, self | frame |\n|---:|---|");
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| ${kb(v)} | ${k} |`);
    console.log("\n| KB/object, inclusive | frame (src/) |\n|---:|---|");
    for (const [k, v] of [...inclusive].filter(([k]) => k.includes("src/")).sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`| ${kb(v)} | ${k} |`);
    }
  } finally {
    for (const c of CLUSTERS) await kubectlOk(c, ["delete", "namespace", ns, "--wait=false"]).catch(() => {});
  }
  Deno.exit(0); // the hub runs in this process until killed
}

await main();
