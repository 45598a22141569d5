// The `mirror` bench phase: the Mirror operator's propagation latency (1 Mirror × 2 targets, 500 Mirrors × 2 targets),
// apiserver writes per source change per target (and with nothing changed), and a 100-change storm on one source.
//
// How it measures: the first cluster is the home (the sources and Mirrors), the next two are the targets. An
// independent label-selected watch of ConfigMaps in each target records when each value of each copy first arrives;
// a change's latency is from just before its source PATCH is sent to the later of the two arrivals. Writes are the
// hub's own PATCH requests per target cluster (`rest_client_requests_total`, a copy is written by server-side apply,
// a PATCH). Everything lives in one fresh namespace, deleted afterwards (the Mirrors first, so their finalizer runs).
//
// Assumptions: at least 3 local clusters; nothing else writes ConfigMaps into the bench's namespace.

import { CopyWatch, HANG_GUARD_MS } from "./_copy_watch.ts";
import { BenchHub, sleep, sumMetric } from "../lib/hub.ts";
import type { Row } from "../lib/report.ts";
import { log, withNamespace } from "../lib/run.ts";
import { percentile, round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

const MIRRORS_PATH = (ns: string) => `/apis/demo.operator/v1/namespaces/${ns}/mirrors`;
const CONFIGMAPS_PATH = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const COPY_LABEL = "operator-hub.dev/mirror=copy";

/** Sizes of the phase. */
export interface MirrorBenchSizes {
  /** Sequential source changes timed with 1 Mirror × 2 targets. */
  singleChanges: number;
  /** Mirrors in the large case. */
  manyMirrors: number;
  /** Sequential source changes timed while `manyMirrors` Mirrors exist. */
  manySingleChanges: number;
  /** Source changes in the storm, and the time they are spread over. */
  stormChanges: number;
  stormMs: number;
  /** Touches of the Mirror (an annotation) that must cause no copy write. */
  touches: number;
}

export const MIRROR_SIZES: MirrorBenchSizes = {
  singleChanges: 50,
  manyMirrors: 500,
  manySingleChanges: 30,
  stormChanges: 100,
  stormMs: 1000,
  touches: 10,
};

/** The hub's PATCH requests to each cluster in `clusters`, from its /metrics. */
async function patchesPer(hub: BenchHub, clusters: string[]): Promise<number[]> {
  const text = (await hub.proc.get("/metrics")).text;
  const lines = text.split("\n").filter((l) => l.includes('method="PATCH"')).join("\n");
  return clusters.map((c) => sumMetric(lines, "rest_client_requests_total", `cluster="${c}"`));
}

async function mirrorReconciles(hub: BenchHub): Promise<number> {
  return sumMetric((await hub.proc.get("/metrics")).text, "controller_runtime_reconcile_total", 'controller="mirror"');
}

function configMap(ns: string, name: string, v: string) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns }, data: { v } };
}

function mirror(ns: string, name: string, source: string, targets: string[]) {
  return {
    apiVersion: "demo.operator/v1",
    kind: "Mirror",
    metadata: { name, namespace: ns },
    spec: { source: { kind: "ConfigMap", name: source }, clusters: targets },
  };
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/** Runs the phase and adds its rows and `mirror_*` keys to the report. */
export async function mirrorPhase(ctx: PhaseContext, sizes: MirrorBenchSizes = MIRROR_SIZES): Promise<void> {
  const { cfg, names, cl, rows, out } = ctx;
  if (cl.length < 3) {
    log("mirror: skipped, needs at least 3 clusters (a home and two targets)");
    return;
  }
  const [home, ...targets] = cl.slice(0, 3);
  const targetNames = targets.map((t) => t.name);
  await withNamespace(cl.slice(0, 3), "mirror", async (ns) => {
    const watches = targets.map((t) => new CopyWatch(t, ns));
    const hub = BenchHub.start(names.slice(0, 3), [ns], [
      "--operators",
      "mirror",
      "--home-cluster",
      home.name,
      "--concurrency",
      String(cfg.concurrency),
      ...cfg.hubArgs,
    ], cfg.denoFlags);
    const patch = (name: string, v: string) =>
      home.request("PATCH", `${CONFIGMAPS_PATH(ns)}/${name}`, { data: { v } }, "application/merge-patch+json");
    /** Sends one source change and resolves with ms until both targets show it. */
    const timedChange = async (name: string, v: string): Promise<number> => {
      const t0 = performance.now();
      await patch(name, v);
      const arrived = await Promise.all(watches.map((w) => w.waitValue(name, v)));
      return Math.max(...arrived) - t0;
    };
    try {
      await hub.waitReady();

      // 1 Mirror × 2 targets: sequential changes, the hub idle before each.
      await home.request("POST", CONFIGMAPS_PATH(ns), configMap(ns, "one", "0"));
      await home.request("POST", MIRRORS_PATH(ns), mirror(ns, "one", "one", targetNames));
      await Promise.all(watches.map((w) => w.waitValue("one", "0")));
      await hub.waitIdle(200);
      const single: number[] = [];
      const w0 = await patchesPer(hub, targetNames);
      for (let i = 1; i <= sizes.singleChanges; i++) {
        single.push(await timedChange("one", String(i)));
        await hub.waitIdle(100);
      }
      const w1 = await patchesPer(hub, targetNames);
      const writesPerChange = w1.map((w, i) => (w - w0[i]) / sizes.singleChanges);
      log(
        `mirror 1×2: ${sizes.singleChanges} changes, latency p50 ${round(percentile(single, 50), 1)} ms, p99 ${
          round(percentile(single, 99), 1)
        } ms; writes per change per target ${writesPerChange.join(", ")}`,
      );

      // Nothing changed: touching the Mirror wakes a reconcile that writes no copy.
      for (let i = 0; i < sizes.touches; i++) {
        const r0 = await mirrorReconciles(hub);
        await home.request("PATCH", `${MIRRORS_PATH(ns)}/one`, {
          metadata: { annotations: { "bench.operator-hub.dev/touch": String(i) } },
        }, "application/merge-patch+json");
        const deadline = performance.now() + HANG_GUARD_MS;
        while ((await mirrorReconciles(hub)) <= r0) {
          if (performance.now() > deadline) throw new Error("mirror: no reconcile after a touch");
          await sleep(10);
        }
        await hub.waitIdle(100);
      }
      const w2 = await patchesPer(hub, targetNames);
      const writesNoChange = w2.map((w, i) => (w - w1[i]) / sizes.touches);
      log(`mirror: ${sizes.touches} touches of the Mirror, writes per target ${writesNoChange.join(", ")}`);

      // The storm: `stormChanges` changes of one source, one writer sending them in order on a schedule spread over
      // `stormMs` (a change is sent when due, or as soon as the previous one was answered when the apiserver is
      // slower than that: concurrent writes of one object would only contend inside the apiserver).
      const stormStart = performance.now();
      for (let i = 1; i <= sizes.stormChanges; i++) {
        const due = stormStart + ((i - 1) * sizes.stormMs) / sizes.stormChanges;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        await patch("one", `s${i}`);
      }
      const stormSentMs = performance.now() - stormStart;
      const last = (await home.request("GET", `${CONFIGMAPS_PATH(ns)}/one`)).data.v as string;
      const settledAt = Math.max(...await Promise.all(watches.map((w) => w.waitValue("one", last))));
      const stormSettleMs = settledAt - stormStart - stormSentMs;
      await hub.waitIdle(300);
      const w3 = await patchesPer(hub, targetNames);
      const stormWrites = w3.map((w, i) => w - w2[i]);
      const source = await home.request("GET", `${CONFIGMAPS_PATH(ns)}/one`);
      const copies = await Promise.all(targets.map((t) => t.request("GET", `${CONFIGMAPS_PATH(ns)}/one`)));
      const stormCorrect = source.data.v === last &&
        copies.every((c) => JSON.stringify(c.data) === JSON.stringify(source.data));
      const versionsSeen = watches.map((w) =>
        [...w.arrivals.get("one")!.keys()].filter((v) => v.startsWith("s")).length
      );
      log(
        `mirror storm: ${sizes.stormChanges} changes sent in ${round(stormSentMs, 0)} ms; writes per target ${
          stormWrites.join(", ")
        }; the copies went through ${versionsSeen.join(", ")} of the values; final content (${last}) ${
          stormCorrect ? "correct" : "WRONG"
        }, ${round(stormSettleMs, 1)} ms after the last change`,
      );

      // 500 Mirrors × 2 targets: the initial sync, then changes one at a time, then every source at once.
      const many = Array.from({ length: sizes.manyMirrors }, (_, i) => `m${String(i).padStart(4, "0")}`);
      const createdAt = performance.now();
      await pool(many, 16, async (name) => {
        await home.request("POST", CONFIGMAPS_PATH(ns), configMap(ns, name, "0"));
        await home.request("POST", MIRRORS_PATH(ns), mirror(ns, name, name, targetNames));
      });
      for (const name of many) await Promise.all(watches.map((w) => w.waitValue(name, "0")));
      const initialSyncS = (Math.max(...many.flatMap((n) => watches.map((w) => w.arrivals.get(n)!.get("0")!))) -
        createdAt) / 1000;
      await hub.waitIdle(500);
      log(`mirror ${sizes.manyMirrors}×2: created and first synced in ${round(initialSyncS, 1)} s`);
      const manySingle: number[] = [];
      for (let i = 1; i <= sizes.manySingleChanges; i++) {
        const name = many[Math.floor(Math.random() * many.length)];
        manySingle.push(await timedChange(name, `one-${i}`));
        await hub.waitIdle(100);
      }
      const w4 = await patchesPer(hub, targetNames);
      // Every source changed at once (sent 32 at a time, as fast as the apiserver takes them), then each change's
      // time to both copies.
      const sentAt = new Array<number>(many.length);
      const burstStart = performance.now();
      const arrivals = Promise.all(many.map((name) => Promise.all(watches.map((w) => w.waitValue(name, "burst")))));
      await pool([...many.keys()], 32, async (i) => {
        sentAt[i] = performance.now();
        await patch(many[i], "burst");
      });
      const burst = (await arrivals).map((arrived, i) => Math.max(...arrived) - sentAt[i]);
      const burstS = (Math.max(...burst.map((ms, i) => sentAt[i] + ms)) - burstStart) / 1000;
      await hub.waitIdle(500);
      const w5 = await patchesPer(hub, targetNames);
      const burstWrites = w5.map((w, i) => (w - w4[i]) / many.length);
      log(
        `mirror ${sizes.manyMirrors}×2: one change at a time p50 ${round(percentile(manySingle, 50), 1)} ms, p99 ${
          round(percentile(manySingle, 99), 1)
        } ms; all ${many.length} at once p50 ${round(percentile(burst, 50), 1)} ms, p99 ${
          round(percentile(burst, 99), 1)
        } ms (all in sync after ${round(burstS, 1)} s); writes per change per target ${burstWrites.join(", ")}`,
      );

      // The Mirrors deleted: the finalizer removes all copies.
      const deleteAt = performance.now();
      await home.request("DELETE", MIRRORS_PATH(ns));
      for (;;) {
        const left = await home.request("GET", `${MIRRORS_PATH(ns)}?limit=1`);
        if (left.items.length === 0) break;
        if (performance.now() - deleteAt > 10 * HANG_GUARD_MS) throw new Error("mirror: Mirrors not deleted");
        await sleep(200);
      }
      const deleteS = (performance.now() - deleteAt) / 1000;
      const copiesLeft = await Promise.all(
        targets.map(async (t) =>
          (await t.request("GET", `${CONFIGMAPS_PATH(ns)}?labelSelector=${encodeURIComponent(COPY_LABEL)}`)).items
            .length
        ),
      );
      log(`mirror: ${1 + many.length} Mirrors deleted in ${round(deleteS, 1)} s; copies left ${copiesLeft.join(", ")}`);

      const p = (v: number[], q: number) => round(percentile(v, q), 1);
      const maxOf = (v: number[]) => round(Math.max(...v), 3);
      Object.assign(out, {
        mirror_1x2_latency_p50_ms: p(single, 50),
        mirror_1x2_latency_p99_ms: p(single, 99),
        mirror_500x2_latency_p50_ms: p(manySingle, 50),
        mirror_500x2_latency_p99_ms: p(manySingle, 99),
        mirror_500x2_burst_latency_p50_ms: p(burst, 50),
        mirror_500x2_burst_latency_p99_ms: p(burst, 99),
        mirror_500x2_burst_seconds: round(burstS, 2),
        mirror_500x2_initial_sync_s: round(initialSyncS, 2),
        mirror_writes_per_change_per_target: maxOf(writesPerChange),
        mirror_500x2_writes_per_change_per_target: maxOf(burstWrites),
        mirror_writes_per_target_no_change: maxOf(writesNoChange),
        mirror_storm_changes: sizes.stormChanges,
        mirror_storm_sent_ms: round(stormSentMs, 0),
        mirror_storm_final_value: last,
        mirror_storm_writes_per_target: Math.max(...stormWrites),
        mirror_storm_final_correct: stormCorrect,
        mirror_storm_settle_ms: round(stormSettleMs, 1),
        mirror_delete_501_s: round(deleteS, 2),
        mirror_detail: {
          home: home.name,
          targets: targetNames,
          sizes,
          latency_samples_ms: {
            "1x2": single.map((v) => round(v, 1)),
            "500x2": manySingle.map((v) => round(v, 1)),
          },
          writes_per_change_per_target: writesPerChange,
          writes_per_target_no_change: writesNoChange,
          burst_writes_per_change_per_target: burstWrites,
          storm_writes_per_target: stormWrites,
          storm_distinct_values_seen_per_target: versionsSeen,
          copies_left_after_delete: copiesLeft,
        },
      });
      const one = (key: string, label: string, v: number, unit: string, target?: string, met?: boolean): Row => ({
        key,
        label,
        s: summarize([v]),
        unit,
        target,
        met,
        digits: 2,
      });
      rows.push(
        one("mirror_1x2_latency_p50_ms", "mirror 1×2: source change → both copies, p50", p(single, 50), "ms"),
        one("mirror_1x2_latency_p99_ms", "mirror 1×2: p99", p(single, 99), "ms"),
        one("mirror_500x2_latency_p50_ms", "mirror 500×2, one change at a time: p50", p(manySingle, 50), "ms"),
        one("mirror_500x2_latency_p99_ms", "mirror 500×2, one change at a time: p99", p(manySingle, 99), "ms"),
        one("mirror_500x2_burst_latency_p50_ms", "mirror 500×2, all 500 changed at once: p50", p(burst, 50), "ms"),
        one("mirror_500x2_burst_latency_p99_ms", "mirror 500×2, all 500 changed at once: p99", p(burst, 99), "ms"),
        one(
          "mirror_writes_per_change_per_target",
          "mirror writes per source change per target",
          maxOf(writesPerChange),
          "",
          "1.0",
          writesPerChange.every((w) => w === 1),
        ),
        one(
          "mirror_writes_per_target_no_change",
          "mirror writes per target when nothing changed",
          maxOf(writesNoChange),
          "",
          "0",
          writesNoChange.every((w) => w === 0),
        ),
        one(
          "mirror_storm_writes_per_target",
          `mirror storm: writes per target for ${sizes.stormChanges} changes in ${round(stormSentMs, 0)} ms`,
          Math.max(...stormWrites),
          "",
          `≪ ${sizes.stormChanges}, final content correct`,
          Math.max(...stormWrites) < sizes.stormChanges / 2 && stormCorrect,
        ),
      );
    } finally {
      // Never leave Mirrors with a finalizer behind: a namespace holding one cannot go.
      await home.request("DELETE", MIRRORS_PATH(ns)).catch(() => {});
      await hub.stop();
      const left = await home.request("GET", MIRRORS_PATH(ns)).catch(() => ({ items: [] }));
      await Promise.all(
        // deno-lint-ignore no-explicit-any -- Mirrors from the list
        left.items.map((m: any) =>
          home.request(
            "PATCH",
            `${MIRRORS_PATH(ns)}/${m.metadata.name}`,
            { metadata: { finalizers: null } },
            "application/merge-patch+json",
          ).catch(() => {})
        ),
      );
      await Promise.all(watches.map((w) => w.stop()));
    }
  });
}
