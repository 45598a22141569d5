// What the Mirror's source watch costs the hub when the source namespace holds many unrelated objects: the hub's RSS
// and its /status `watchedObjects` with one Mirror in sync, in a namespace holding only the source and in one that
// also holds N unrelated ConfigMaps and M Secrets (1 KiB of data each). With --baseline DIR (a checkout of an older
// commit, e.g. `git archive 3ba0964 | tar -x -C DIR`), the same runs with that code, for the before/after figure.
//
// Usage: deno run -A bench/tools/mirror_source_cache.ts [--configmaps 3000] [--secrets 1000] [--reps 3] [--baseline DIR]
// Assumptions: the local clusters are up (`deno task clusters:up`); nothing else needs them meanwhile.

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { localApi } from "../../dev/support/cluster_api.ts";
import { freePort } from "../../dev/support/hub_process.ts";
import { KUBECONFIG_PATH, kubectl, testNamespace } from "../../dev/support/mod.ts";
import { memoryMb } from "../lib/proc.ts";
import { round, summarize } from "../lib/stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const KIB = "x".repeat(1024);

async function createMany(namespace: string, configMaps: number, secrets: number): Promise<void> {
  const api = localApi("prod");
  const bodies = [
    ...Array.from({ length: configMaps }, (_, i) => ({
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `unrelated-${i}` }, data: { blob: KIB } },
    })),
    ...Array.from({ length: secrets }, (_, i) => ({
      path: `/api/v1/namespaces/${namespace}/secrets`,
      body: { apiVersion: "v1", kind: "Secret", metadata: { name: `unrelated-${i}` }, stringData: { blob: KIB } },
    })),
  ];
  try {
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < bodies.length) {
        const { path, body } = bodies[next++];
        await api.request("POST", path, body);
      }
    }));
  } finally {
    api.close();
  }
}

/** Starts the hub of `root` on one Mirror in `namespace`, waits until it is in sync, and reads its RSS and status. */
async function measure(root: string, namespace: string): Promise<{ rssMb: number; watchedObjects: number | null }> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      existsSync(`${root}/src/cli/main.ts`) ? `${root}/src/cli/main.ts` : `${root}/src/main.ts`, // older checkouts: src/main.ts
      "--kubeconfig",
      KUBECONFIG_PATH,
      "--clusters",
      "prod,staging",
      "--operators",
      "mirror",
      "--home-cluster",
      "prod",
      "--namespace",
      namespace,
      "--liveness",
      `http://127.0.0.1:${port}/healthz`,
      "--log-level",
      "error",
    ],
    cwd: root,
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    // Ready (every watch listed), and the Mirror in sync (its status is the previous run's until this hub's
    // reconcile: both conditions, then the settle, keep the reading after this hub's own lists and reconcile).
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.body?.cancel().then(() => r.ok),
        () => false,
      );
      const r = await kubectl("prod", ["get", "mirror", "bench", "-n", namespace, "-o", "jsonpath={.status.synced}"]);
      if (ready && r.stdout === "1/1") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, 3000)); // let the lists' garbage go
    const status = await (await fetch(`http://127.0.0.1:${port}/status`)).json();
    return {
      rssMb: memoryMb(child.pid).rss,
      watchedObjects: status.clusters?.prod?.operators?.mirror?.watchedObjects ?? null,
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      configmaps: { type: "string", default: "3000" },
      secrets: { type: "string", default: "1000" },
      reps: { type: "string", default: "3" },
      baseline: { type: "string" },
    },
  });
  const roots: [string, string][] = [["current", ROOT.replace(/\/$/, "")]];
  if (values.baseline) roots.push(["baseline", values.baseline]);
  await using empty = await testNamespace("bench-mirror-empty", { contexts: ["prod", "staging"] });
  await using full = await testNamespace("bench-mirror-full", { contexts: ["prod", "staging"] });
  await createMany(full.name, Number(values.configmaps), Number(values.secrets));
  for (const ns of [empty.name, full.name]) {
    const objects = [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "source", namespace: ns }, data: { a: "1" } },
      {
        apiVersion: "demo.operator/v1",
        kind: "Mirror",
        metadata: { name: "bench", namespace: ns },
        spec: { source: { kind: "ConfigMap", name: "source" }, clusters: ["staging"] },
      },
    ];
    for (const o of objects) await kubectl("prod", ["apply", "-f", "-"], { stdin: JSON.stringify(o) });
  }
  const out: Record<string, unknown> = {};
  for (const [label, root] of roots) {
    for (const [cond, ns] of [["only_source", empty.name], ["plus_unrelated", full.name]] as const) {
      const rss: number[] = [];
      let watched: number | null = null;
      for (let i = 0; i < Number(values.reps); i++) {
        const m = await measure(root, ns);
        rss.push(m.rssMb);
        watched = m.watchedObjects;
      }
      out[`${label}_${cond}_rss_mib`] = { ...summarize(rss), samples: rss.map((v) => round(v, 1)) };
      out[`${label}_${cond}_watched_objects`] = watched;
    }
  }
  for (const ns of [empty.name, full.name]) {
    await kubectl("prod", [
      "patch",
      "mirror",
      "bench",
      "-n",
      ns,
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    ]);
  }
  console.log(
    JSON.stringify({ configmaps: Number(values.configmaps), secrets: Number(values.secrets), ...out }, null, 2),
  );
}

if (import.meta.main) await main();
