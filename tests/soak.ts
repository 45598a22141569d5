// Soak: steady create/delete churn on three clusters for 10 minutes, with the hub's memory sampled every minute.
//
// Usage: deno run --allow-all tests/soak.ts [--minutes 10] [--rate 10] [--keep 200] [--clusters prod,staging,dev]
// (`deno task soak`). Needs the local clusters' etcd and binaries (`deno task clusters:up`).
//
// By default the three clusters are private apiservers (dev/support/fault_cluster.ts) on the shared etcd, so that
// objects other people's tests leave in prod, staging and dev do not grow the hub's store during the run and blur the
// memory slope. `--clusters prod,staging,dev` soaks the shared clusters instead.
//
// Each cluster gets a fresh namespace; every 100 ms the script creates `rate / 10` Uuids there and, once more than
// `keep` exist, deletes the oldest ones at the same pace, so the hub sees a steady stream of ADDED, MODIFIED and DELETED
// events. The hub's RSS (VmRSS from /proc/<pid>/status) is printed each minute; the slope is fitted (least squares)
// over the samples after the warm-up (the first 2 minutes). At the end, every remaining object must hold a UUID.
// Exit code 0 when every object is served, 1 otherwise (the slope is reported, not judged: read it).

import { parseArgs } from "node:util";
import { type ClusterApi, localApi, UUID_V4, waitFor } from "../dev/support/cluster_api.ts";
import { FaultApiserver, tempDir } from "../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../dev/support/kubeconfig_text.ts";
import { Cleanup, finishHub, startHub } from "./support/fault_harness.ts";
import { requireClusters, testNamespace } from "./support/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "10" },
    keep: { type: "string", default: "200" },
    clusters: { type: "string", default: "" },
    "warmup-minutes": { type: "string", default: "2" },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const keep = Number(values.keep);
const warmup = Number(values["warmup-minutes"]);
const shared = String(values.clusters).split(",").filter(Boolean);
if (!(minutes > 0 && rate > 0 && keep > 0 && warmup >= 0)) {
  console.error("soak: --minutes, --rate and --keep must be positive numbers, --clusters a list of contexts");
  Deno.exit(2);
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const m = status.match(/^VmRSS:\s+(\d+)\s+kB/m);
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

interface Churn {
  api: ClusterApi;
  created: number;
  deleted: number;
  errors: number;
  live: string[];
}

async function churn(c: Churn, ns: string, signal: AbortSignal): Promise<void> {
  const perTick = Math.max(1, Math.round(rate / 10));
  let i = 0;
  while (!signal.aborted) {
    const tick = performance.now();
    const ops: Promise<void>[] = [];
    for (let k = 0; k < perTick; k++) {
      const name = `soak-${i++}`;
      ops.push(
        c.api.createUuid(ns, name).then(() => {
          c.created++;
          c.live.push(name);
        }, () => void c.errors++),
      );
    }
    while (c.live.length > keep) {
      const victim = c.live.shift()!;
      ops.push(c.api.deleteUuid(ns, victim).then(() => void c.deleted++, () => void c.errors++));
    }
    await Promise.all(ops);
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - tick))));
  }
}

requireClusters();
await using cleanup = new Cleanup();
const privateClusters = shared.length === 0;
const clusters = privateClusters ? ["soak-a", "soak-b", "soak-c"] : shared;
const churns: Churn[] = [];
const namespaces: string[] = [];
const extraKubeconfigs: string[] = [];
if (privateClusters) {
  const dir = cleanup.add(await tempDir("soak"), (d) => d.remove());
  const servers = await Promise.all(clusters.map((name) => FaultApiserver.start({ name })));
  for (const f of servers) cleanup.add(f, (x) => x.destroy());
  extraKubeconfigs.push(
    await dir.write("kubeconfig.yaml", kubeconfigText(servers.map((f) => f.context(f.name)))),
  );
  for (const f of servers) {
    const api = cleanup.add(f.api(f.name), (a) => a.close());
    await api.createNamespace("soak");
    churns.push({ api, created: 0, deleted: 0, errors: 0, live: [] });
    namespaces.push("soak");
  }
} else {
  for (const c of shared) {
    const ns = cleanup.add(await testNamespace("soak", { contexts: [c] }), (n) => n.cleanup());
    namespaces.push(ns.name);
    churns.push({ api: cleanup.add(localApi(c), (a) => a.close()), created: 0, deleted: 0, errors: 0, live: [] });
  }
}
const hub = startHub(clusters, { extraKubeconfigs });
cleanup.defer(() => finishHub(hub, "soak").catch((err) => console.error(`soak: ${err}`)));
let exitCode = 1;
{
  await hub.waitReady(120_000);
  const stop = new AbortController();
  const loops = churns.map((c, i) => churn(c, namespaces[i], stop.signal));
  const samples: { minute: number; rssMiB: number; objects: number[]; queue: number }[] = [];
  const sample = async (minute: number) => {
    const s = (await hub.get("/status")).body;
    const rssMiB = rssKiB(hub.pid) / 1024;
    samples.push({ minute, rssMiB, objects: clusters.map((c) => s.clusters[c].objects), queue: s.controller.queued });
    const ops = churns.reduce((n, c) => n + c.created + c.deleted, 0);
    console.log(
      `minute ${String(minute).padStart(2)}  RSS ${rssMiB.toFixed(1).padStart(6)} MiB  objects ${
        clusters.map((c) => `${c}=${s.clusters[c].objects}`).join(" ")
      }  queue ${s.controller.queued}  status ${s.status}  ops so far ${ops}`,
    );
  };
  console.log(
    `soak: ${minutes} min, ${rate} creates/s and as many deletes per cluster (keeping ${keep}), on ${clusters} ` +
      `(${privateClusters ? "private apiservers" : "shared clusters"})`,
  );
  await sample(0);
  for (let m = 1; m <= minutes; m++) {
    await new Promise((r) => setTimeout(r, 60_000));
    await sample(m);
  }
  stop.abort();
  await Promise.all(loops);

  // Every object still there holds a UUID.
  let unserved = 0;
  for (const [i, c] of churns.entries()) {
    try {
      await waitFor(
        async () => {
          const m = await c.api.uuidsOf(namespaces[i]);
          return [...m.values()].every((u) => typeof u === "string" && UUID_V4.test(u));
        },
        `every Uuid in ${c.api.name} served`,
        60_000,
        500,
      );
    } catch (err) {
      unserved++;
      console.error(String(err));
    }
  }
  const after = samples.filter((s) => s.minute >= warmup);
  const perMinute = slope(after.map((s) => [s.minute, s.rssMiB]));
  const first = after[0]?.rssMiB ?? 0;
  const totals = churns.map((c) => `${c.api.name}: ${c.created} created, ${c.deleted} deleted, ${c.errors} errors`);
  console.log(`\n${totals.join("; ")}`);
  console.log(
    `RSS slope after ${warmup} min warm-up: ${perMinute >= 0 ? "+" : ""}${perMinute.toFixed(2)} MiB/min ` +
      `(${((perMinute / Math.max(first, 1)) * 100).toFixed(2)}% of ${first.toFixed(1)} MiB per minute); ` +
      `RSS min ${Math.min(...after.map((s) => s.rssMiB)).toFixed(1)} max ${
        Math.max(...after.map((s) => s.rssMiB)).toFixed(1)
      } MiB; unserved clusters: ${unserved}`,
  );
  exitCode = unserved === 0 ? 0 : 1;
}
await cleanup.run();
Deno.exit(exitCode);
