// registered_clusters --phases churn: thousands of register/unregister cycles over 20 contexts, then memory, fds,
// sockets, series and timers after GC, idle and a full GC, against before: what churn leaves behind.

import v8 from "node:v8";
import type { MallocProbe } from "../lib/allocator.ts";
import { localEndpoint } from "../../dev/support/cluster_api.ts";
import { kubeconfig, type RegisteredContext, until } from "./_context.ts";
import { fds, mappedMiB, sockets } from "../lib/self_probe.ts";

/** What the churn phase is told on the command line (as parsed), and the probes it samples with. */
export interface ChurnOptions {
  cycles: string;
  idleSeconds: string;
  rounds: string;
  /** auto, folder or secret. */
  churnVia: string;
  /** A folder for heap snapshots (round-N.heapsnapshot), or undefined for none. */
  heapSnapshots?: string;
  malloc: MallocProbe | undefined;
  cpuSeconds: () => number;
}

const mib = (x: number) => Math.round(x / 1048576);

/** The churn phase; adds `churn` to `ctx.results`. Needs --v8-flags=--expose-gc. */
export async function churnPhase(ctx: RegisteredContext, options: ChurnOptions): Promise<void> {
  const { admin, clusterDir, liveTimers, ns, results, say, secretManifest, series, state, writeAtomic } = ctx;
  const { malloc, cpuSeconds } = options;
  const gc = (globalThis as { gc?: (options?: unknown) => void }).gc;
  if (!gc) {
    throw new Error("the churn phase compares memory after garbage collection: run with --v8-flags=--expose-gc");
  }
  const cycles = Number(options.cycles);
  const idleSeconds = Number(options.idleSeconds);
  const contexts = 20;
  const names = Array.from({ length: contexts }, (_, i) => `churn-${i}`);
  const texts = names.map((n, i) =>
    kubeconfig(i % 2 ? "dev" : "staging", n, localEndpoint(i % 2 ? "dev" : "staging").token)
  );
  // Files need inotify: when the machine's inotify instances are used up (fs.inotify.max_user_instances), the
  // folder provider falls back to re-reading every 10 s, far too slow for churn; labelled Secrets are used then.
  let via = options.churnVia;
  if (via === "auto") {
    try {
      Deno.watchFs(clusterDir).close();
      via = "folder";
    } catch (err) {
      say(`churn through Secrets: the cluster folder cannot be watched here (${err})`);
      via = "secret";
    }
  }
  let cyclesDone = 0;
  const cycle = async (i: number) => {
    cyclesDone++;
    const path = `${clusterDir}/${names[i]}.yaml`;
    if (via === "folder") await writeAtomic(path, texts[i]);
    else {await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
        body: JSON.parse(secretManifest(names[i], texts[i])),
      });}
    await until(() => state(names[i]) === "watching", `${names[i]} watching`);
    if (via === "folder") await Deno.remove(path);
    else await admin.request("DELETE", `/api/v1/namespaces/${ns}/secrets/${names[i]}`);
    await until(() => state(names[i]) === undefined, `${names[i]} gone`);
  };
  for (let i = 0; i < contexts; i++) await cycle(i); // warm-up: every code path loaded once
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /**
   * One memory sample. `regular` is an ordinary full GC (`gc()`); `full` is V8's last-resort GC, which also hands
   * V8's pooled pages and unused young-generation space back to the OS: what V8's memory reducer does by itself
   * once the process is idle (the `idle` row shows it happening without any forced GC).
   */
  const sample = async (collect: "none" | "regular" | "full") => {
    admin.resetConnections(); // the bench's own idle keep-alive sockets (Secret churn) are not the hub's
    if (collect === "regular") gc();
    if (collect === "full") gc({ type: "major", execution: "sync", flavor: "last-resort" });
    const m = Deno.memoryUsage();
    const space = (name: string) => mib(v8.getHeapSpaceStatistics().find((s) => s.space_name === name)!.space_size);
    const g = malloc?.info();
    return {
      rss: mib(m.rss),
      heap_used: Math.round(m.heapUsed / 104857.6) / 10,
      heap_total: mib(m.heapTotal),
      new_space: space("new_space"),
      old_space: space("old_space"),
      ...mappedMiB(),
      ...g,
      fds: fds(),
      sockets: sockets(),
      series: (await series()).length,
      timers: liveTimers.size,
    };
  };
  await sleep(3000);
  const before = await sample("full");
  if (options.heapSnapshots) v8.writeHeapSnapshot(`${options.heapSnapshots}/round-0.heapsnapshot`);
  const trace = Deno.env.get("BENCH_TRACE_MEMORY")
    ? setInterval(() => {
      const m = Deno.memoryUsage();
      say(
        `cycles ${cyclesDone}; memory: rss ${mib(m.rss)} heapTotal ${mib(m.heapTotal)} heapUsed ${
          mib(m.heapUsed)
        } external ${mib(m.external)} MiB`,
      );
    }, 10_000)
    : undefined;
  // Each round: the cycles, then an ordinary GC, then idle (V8's memory reducer shrinks the young generation and
  // frees its pooled pages on its own, nothing forced), then a full GC. A second round shows whether what stays is
  // a leak (it grows again) or a high-water mark (it is reused).
  const rounds = [];
  for (let r = 0; r < Number(options.rounds); r++) {
    const t0 = performance.now();
    const cpu0 = cpuSeconds();
    await Promise.all(names.map(async (_, i) => {
      for (let c = i; c < cycles; c += contexts) await cycle(i);
    }));
    const seconds = Math.round((performance.now() - t0) / 100) / 10;
    const cpu = Math.round((cpuSeconds() - cpu0) * 10) / 10;
    await sleep(3000);
    const afterGc = await sample("regular");
    const idleRss: number[] = [];
    for (let s = 0; s < idleSeconds; s += 5) {
      await sleep(5000);
      idleRss.push(mib(Deno.memoryUsage().rss));
    }
    const afterIdle = await sample("none");
    const afterFull = await sample("full");
    // After the sample (writing a snapshot costs native memory): diff them to see what a round left behind.
    if (options.heapSnapshots) v8.writeHeapSnapshot(`${options.heapSnapshots}/round-${r + 1}.heapsnapshot`);
    rounds.push({
      seconds,
      cpu_seconds: cpu,
      after_gc: afterGc,
      after_idle: afterIdle,
      after_full_gc: afterFull,
      idle_rss: idleRss,
    });
  }
  clearInterval(trace);
  // What malloc keeps free but resident: glibc's malloc_trim(0) or jemalloc's purge returns it.
  malloc?.release();
  const afterRelease = malloc ? await sample("none") : undefined;
  const last = rounds[rounds.length - 1];
  const pct = (a: number, b: number) => Math.round(((a - b) / b) * 1000) / 10;
  results.churn = {
    via,
    cycles_per_round: cycles,
    contexts,
    idle_seconds: idleSeconds,
    rss_pct_after_full_gc: rounds.map((x) => pct(x.after_full_gc.rss, before.rss)),
    rss_pct_after_idle: rounds.map((x) => pct(x.after_idle.rss, before.rss)),
    rss_pct_after_gc: rounds.map((x) => pct(x.after_gc.rss, before.rss)),
    ...(afterRelease ? { rss_pct_after_malloc_release: pct(afterRelease.rss, before.rss) } : {}),
    heap_used_pct: pct(last.after_full_gc.heap_used, before.heap_used),
    fds_pct: pct(last.after_full_gc.fds, before.fds),
    series_pct: pct(last.after_full_gc.series, before.series),
    // MiB unless named otherwise.
    before,
    rounds,
    ...(afterRelease ? { after_malloc_release: afterRelease } : {}),
  };
  say(`churn: ${JSON.stringify(results.churn)}`);
}
