// Our list+watch loop (src/kube KubeClient on its own HTTP/1.1 sockets, driven by src/runtime's Watcher) against
// @kubernetes/client-node 2.0.1's ListWatch (its informer, on its Watch): CPU per 1,000 objects listed
// and per 1,000 watch events on a real apiserver, then behaviour under injected faults on a fake one.
//
// Usage: deno run --allow-all bench/watch/watch_compare.ts [--objects N] [--reps R] [--skip-cpu] [--skip-faults]
//        [--out bench/last_watch_compare.json]
//
// Each client runs in its own process (so /proc CPU and RSS are its own), both at once on the same
// events. The fake apiserver is a raw HTTP/1.1 server on loopback, so it can break streams at will.

import { parseArgs } from "node:util";
import { dirname, resolve } from "node:path";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { BenchCluster } from "../lib/cluster.ts";
import { round, summarize } from "../lib/stats.ts";
import { type ClientKind, KINDS, pathOf, ROOT, runChild, spawnChild } from "./_compare_child.ts";
import { FakeApiserver, type Scenario, SCENARIOS } from "./_fake_apiserver.ts";

// ------------------------------------------------------------------------------------------------
// Part 1: CPU on a real apiserver

interface CpuResult {
  listCpuMsPer1000: number;
  watchCpuMsPer1000: number;
  rssMb: number;
}

async function cpuCompare(n: number, reps: number): Promise<Record<ClientKind, CpuResult[]>> {
  requireClusters();
  const c = new BenchCluster("prod");
  const ns = `bench-wc-${crypto.getRandomValues(new Uint32Array(1))[0].toString(16)}`;
  const results: Record<ClientKind, CpuResult[]> = { ours: [], "client-node": [] };
  await c.createNamespace(ns);
  try {
    const names = Array.from({ length: n }, (_, i) => `w-${String(i).padStart(5, "0")}`);
    await c.createMany(ns, names, 32);
    for (let r = 0; r < reps; r++) {
      const children = KINDS.map((kind) =>
        spawnChild({ kind, context: "prod", ns, expect: n, idleTimeoutMs: 90_000, windowMs: 600_000 })
      );
      const listed = await Promise.all(children.map((ch) => ch.waitFor("listed", 60_000)));
      await new Promise((res) => setTimeout(res, 1000));
      // n MODIFIED events: one status write per object.
      let next = 0;
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (next < names.length) {
          const name = names[next++];
          await c.request(
            "PATCH",
            `${pathOf(ns)}/${name}/status`,
            { status: { uuid: crypto.randomUUID(), state: "Ok", message: `rep ${r}` } },
            "application/merge-patch+json",
          );
        }
      }));
      const watched = await Promise.all(children.map((ch) => ch.waitFor("watched", 120_000)));
      const started = children.map((ch) => ch.reports.find((x) => x.kind === "start")!);
      KINDS.forEach((kind, i) => {
        const res: CpuResult = {
          listCpuMsPer1000: (listed[i].cpuMs! - started[i].cpuMs!) / n * 1000,
          watchCpuMsPer1000: (watched[i].cpuMs! - listed[i].cpuMs!) / n * 1000,
          rssMb: watched[i].rssMb!,
        };
        results[kind].push(res);
        console.error(
          `[watch_compare] rep ${r + 1} ${kind}: list ${round(res.listCpuMsPer1000, 1)} ms CPU per 1,000 objects, ` +
            `watch ${round(res.watchCpuMsPer1000, 1)} ms CPU per 1,000 events, RSS ${round(res.rssMb, 0)} MB`,
        );
      });
      for (const ch of children) await ch.done.catch(() => {});
    }
  } finally {
    await c.cleanupNamespace(ns).catch(() => {});
    c.close();
  }
  return results;
}

// ------------------------------------------------------------------------------------------------
// Part 2: faults on a fake apiserver

interface FaultOutcome {
  scenario: Scenario;
  client: ClientKind;
  recovered: boolean;
  recoveredAfterMs: number | null;
  lists: number;
  watches: number;
  sawDeleteOfO2: boolean;
  errorsReported: string[];
  notes: string;
}

async function faultCompare(idleTimeoutMs: number): Promise<FaultOutcome[]> {
  const jobs = SCENARIOS.flatMap((s) =>
    KINDS.map(async (kind): Promise<FaultOutcome> => {
      const ns = "fake";
      const server = new FakeApiserver(s.id, ns);
      const child = spawnChild({ kind, server: server.url, ns, expect: 0, idleTimeoutMs, windowMs: s.windowMs });
      await child.done;
      server.close();
      const start = child.reports.find((r) => r.kind === "listed")?.t ?? 0;
      const canary = child.reports.find((r) => r.kind === "add" && r.name === "canary");
      const errors = child.reports.filter((r) => r.kind === "error" || r.kind === "log").map((r) => r.detail ?? "");
      const neverListed = !child.reports.some((r) => r.kind === "listed");
      const recovered = !!canary;
      let notes = "";
      if (kind === "client-node") {
        const errs = child.reports.filter((r) => r.kind === "error").length;
        if (!recovered && errs > 0) {
          notes = "informer stopped after its error callback; the application must restart it";
        } else if (!recovered && neverListed) notes = "start() never resolved";
        else if (!recovered) notes = "no recovery within the window";
      } else if (!recovered) notes = "no recovery within the window";
      return {
        scenario: s.id,
        client: kind,
        recovered,
        recoveredAfterMs: canary ? canary.t - start : null,
        lists: server.lists,
        watches: server.watches,
        sawDeleteOfO2: child.reports.some((r) => r.kind === "delete" && r.name === "o-2"),
        errorsReported: [...new Set(errors)].slice(0, 4),
        notes,
      };
    })
  );
  return await Promise.all(jobs);
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    strict: true,
    options: {
      child: { type: "string" },
      server: { type: "string" },
      context: { type: "string" },
      ns: { type: "string" },
      expect: { type: "string" },
      "idle-timeout-ms": { type: "string" },
      "window-ms": { type: "string" },
      objects: { type: "string" },
      reps: { type: "string" },
      "skip-cpu": { type: "boolean" },
      "skip-faults": { type: "boolean" },
      out: { type: "string" },
    },
  });
  if (values.child) {
    await runChild({
      kind: values.child as ClientKind,
      server: values.server,
      context: values.context,
      ns: values.ns!,
      expect: Number(values.expect ?? 0),
      idleTimeoutMs: Number(values["idle-timeout-ms"] ?? 90_000),
      windowMs: Number(values["window-ms"] ?? 10_000),
    });
    return;
  }
  const n = Number(values.objects ?? 3000);
  const reps = Number(values.reps ?? 3);
  const out: Record<string, unknown> = { started_at: new Date().toISOString(), objects: n, reps };
  const lines: string[] = [];
  if (!values["skip-cpu"]) {
    const res = await cpuCompare(n, reps);
    const s = (k: ClientKind, f: (r: CpuResult) => number) => summarize(res[k].map(f));
    const rows = [
      ["list: CPU ms per 1,000 objects", (r: CpuResult) => r.listCpuMsPer1000],
      ["watch: CPU ms per 1,000 events", (r: CpuResult) => r.watchCpuMsPer1000],
      ["RSS after the run, MB", (r: CpuResult) => r.rssMb],
    ] as const;
    lines.push(
      `CPU on the real apiserver (prod), ${n} objects, ${reps} repetitions, medians (min–max):`,
      "",
      "| figure | ours (KubeClient + Watcher) | client-node 2.0.1 ListWatch | client-node / ours |",
      "|---|---:|---:|---:|",
    );
    for (const [label, f] of rows) {
      const a = s("ours", f), b = s("client-node", f);
      lines.push(
        `| ${label} | ${round(a.median, 1)} (${round(a.min, 1)}–${round(a.max, 1)}) | ${round(b.median, 1)} (${
          round(b.min, 1)
        }–${round(b.max, 1)}) | ${round(b.median / a.median, 2)}× |`,
      );
    }
    out.cpu = res;
  }
  if (!values["skip-faults"]) {
    const idle = 15_000;
    const outcomes = await faultCompare(idle);
    lines.push(
      "",
      `Faults on a fake apiserver (ours with --watch-idle-timeout ${idle / 1000} s; the hub's default is 90 s):`,
      "",
      "| fault | client | recovered | after | lists | watches | saw the delete after relist | notes |",
      "|---|---|---|---:|---:|---:|---|---|",
    );
    for (const s of SCENARIOS) {
      for (const o of outcomes.filter((o) => o.scenario === s.id)) {
        lines.push(
          `| ${s.what} | ${o.client} | ${o.recovered ? "yes" : "**no**"} | ${
            o.recoveredAfterMs === null ? "" : `${(o.recoveredAfterMs / 1000).toFixed(1)} s`
          } | ${o.lists} | ${o.watches} | ${
            s.id.includes("410") ? (o.sawDeleteOfO2 ? "yes" : "**no**") : ""
          } | ${o.notes} |`,
        );
      }
    }
    out.faults = outcomes;
  }
  const text = lines.join("\n");
  console.log(text);
  const file = resolve(values.out ?? `${ROOT}bench/last_watch_compare.json`);
  await Deno.mkdir(dirname(file), { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify({ ...out, table: text }, null, 2) + "\n");
  console.log(`\nwrote ${file}`);
}

if (import.meta.main) await main();
