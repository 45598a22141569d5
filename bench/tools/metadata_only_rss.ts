// What a metadata-only watch saves the hub: its RSS (after the first list, settled) and peak RSS (VmHWM) with one
// operator watching N ConfigMaps of 4 KiB in one namespace of prod, in three modes (bench/tools/_metadata_only_operator.ts):
// `cached` (full objects cached whole, what a plain informer holds), `full` (full objects on the wire, the hub's default
// projection for watches), `metadata` (`metadataOnly: true`: PartialObjectMetadata on the wire and in the cache).
// Each mode runs --reps times (a fresh hub each time), modes interleaved; the median of each is reported.
//
// Usage: deno run -A bench/tools/metadata_only_rss.ts [--configmaps 2000] [--kib 4] [--reps 3] [--root DIR]
// (--root: the checkout whose hub runs, e.g. `git worktree add DIR COMMIT`; it must hold OPERATOR too.)
// Assumptions: the local clusters are up (`deno task clusters:up`); the namespace it makes is removed at the end.

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { localApi } from "../../dev/support/cluster_api.ts";
import { freePort } from "../../dev/support/hub_process.ts";
import { KUBECONFIG_PATH, testNamespace } from "../../dev/support/mod.ts";
import { memoryMb } from "../lib/proc.ts";
import { round, summarize } from "../lib/stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const OPERATOR = "bench/tools/_metadata_only_operator.ts";
const MODES = ["cached", "full", "metadata"] as const;
type Mode = typeof MODES[number];

async function createConfigMaps(namespace: string, count: number, kib: number): Promise<void> {
  const api = localApi("prod");
  const data = "x".repeat(kib * 1024);
  try {
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        await api.request("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `payload-${i}`, labels: { bench: "metadata-only" } },
          data: { blob: data },
        });
      }
    }));
  } finally {
    api.close();
  }
}

/**
 * Starts a hub watching `namespace`'s ConfigMaps in `mode`, waits until it is ready and its watch cache holds at least
 * `expected` objects (the whole first list: its pages show as they arrive), plus a settle, and reads its memory.
 */
async function measure(
  root: string,
  mode: Mode,
  namespace: string,
  expected: number,
): Promise<{ rss: number; peak: number; watched: number }> {
  const port = freePort();
  const main = existsSync(`${root}/src/cli/main.ts`) ? "src/cli/main.ts" : "src/main.ts";
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${root}/${main}`,
      "--kubeconfig",
      KUBECONFIG_PATH,
      "--clusters",
      "prod",
      "--namespace",
      namespace,
      "--operators",
      "none",
      `${root}/${OPERATOR}`,
      "--liveness",
      `http://127.0.0.1:${port}/healthz`,
      "--log-level",
      "error",
    ],
    cwd: root,
    env: { METADATA_ONLY_BENCH_MODE: mode },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    const deadline = Date.now() + 120_000;
    let watched = 0;
    while (Date.now() < deadline) {
      const status = await fetch(`http://127.0.0.1:${port}/status`).then((r) => r.json(), () => undefined);
      watched = status?.clusters?.prod?.operators?.["bench-configmap-watch"]?.watchedObjects ?? 0;
      if (status?.ready === true && watched >= expected) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (watched < expected) {
      throw new Error(`mode ${mode}: the hub did not cache ${expected} ConfigMaps within 120 s (${watched})`);
    }
    await new Promise((r) => setTimeout(r, 3000)); // let the list's garbage go
    return { ...memoryMb(child.pid), watched };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      configmaps: { type: "string", default: "2000" },
      kib: { type: "string", default: "4" },
      reps: { type: "string", default: "3" },
      root: { type: "string", default: ROOT },
    },
  });
  const count = Number(values.configmaps);
  await using ns = await testNamespace("bench-metadata-only", { contexts: ["prod"] });
  await createConfigMaps(ns.name, count, Number(values.kib));
  const samples = new Map<Mode, { rss: number[]; peak: number[]; watched: number }>(
    MODES.map((m) => [m, { rss: [], peak: [], watched: 0 }]),
  );
  for (let rep = 0; rep < Number(values.reps); rep++) {
    for (const mode of MODES) {
      const m = await measure(values.root.replace(/\/$/, ""), mode, ns.name, count);
      const s = samples.get(mode)!;
      s.rss.push(round(m.rss, 1));
      s.peak.push(round(m.peak, 1));
      s.watched = m.watched;
    }
  }
  const out: Record<string, unknown> = { configmaps: count, kib: Number(values.kib), reps: Number(values.reps) };
  for (const [mode, s] of samples) {
    out[mode] = {
      rss_mib: summarize(s.rss),
      peak_rss_mib: summarize(s.peak),
      watched_objects: s.watched,
    };
  }
  console.log(JSON.stringify(out, null, 2));
}

if (import.meta.main) await main();
