// `deno task bench`: the hub against the apiservers' own ceiling on the real local clusters; prints a
// Markdown table, writes JSON (bench/last.json) and an SVG chart (bench/last.svg).
//
// Phases (each figure is the median of `--reps` repetitions, with min and max):
// - throughput: M objects per cluster created at once; the hub (a real subprocess, `deno task run`'s
//   permissions and --v8-flags) against the ceiling, a minimal direct client (no watch, no queue, no
//   framework) that makes the same creates and the same one status write per object at the same
//   concurrency, in the same run, rotating which goes first. A third, diagnostic run adds one more
//   watch stream to the ceiling: what serving an operator's watch costs the apiservers. Completion is
//   timed by an independent watch in every run.
// - idle: single objects created one at a time on an idle hub.
// - fairness: 3,000 objects waiting in cluster A when the hub starts, then one object in cluster B.
// - scale: 3 × 10,000 objects; one first start that writes them all, then restarts: startup to
//   ready, RSS.
// - relist (bench/phases/relist.ts): live creates while the hub works through --scale-objects listed objects per
//   cluster, against the same creates once it is idle (live_p99_during_relist_ms, idle_p99_ms, their ratio).
// - backlog (bench/lib/backlog.ts): N objects per cluster made by real `kubectl apply` while no operator runs,
//   then the hub started; seconds from process start to all Ok, CPU per object net of an empty start, writes
//   per object, peak RSS; against the ceiling draining the same backlog. On both CRD shapes.
// - kubectl: the throughput phase with objects created exactly as `kubectl apply` creates them; on both shapes.
// - mirror (bench/phases/mirror.ts): the Mirror operator, home = the first cluster, targets = the next two: source change →
//   both copies p50/p99 with 1 Mirror and with 500, writes per change per target, a 100-change storm on one source.
// - shards (bench/phases/shards.ts): three --shard replicas on 30 namespaced clusters: takeover after kill -9 and
//   SIGTERM, clusters moved when a fourth joins, fence violations, Lease writes per second at 30 and 1,000 clusters.
// - admission (bench/phases/admission.ts): the Website example's webhooks for prod, staging and dev; admission p50 and
//   p99 from the apiservers' own apiserver_admission_webhook_admission_duration_seconds (admission_p50_ms, _p99_ms).
// - profiles (bench/phases/cluster_profiles.ts): 1,000 ClusterProfiles in prod, each reached through the tests' exec
//   plugin: hub spawn → every profile `watching` (cluster_profiles_1000_watching_s).
// - peer: the kube-rs peer (bench/peers/kube_rs, built with cargo on first use) runs beside the hub in the
//   backlog, kubectl and idle phases, alternating with it in the same run; the hub-over-peer ratios. The
//   controller-runtime peer (bench/peers/controller_runtime, built with go on first use) runs in the backlog and scale
//   phases (peer_controller_runtime_rss_ratio_backlog, peer_controller_runtime_rss_ratio_10k).
// - background (bench/phases/background.ts): each cluster filled with ConfigMaps, Secrets and Deployments no operator
//   needs, then the backlog; the hub (default operators, and Uuid only) and both peers (background_rss_growth_mb).
// - memory (bench/phases/memory.ts): the idle hub's RSS (default operators on prod, staging and dev, /readyz 200 and 3 s
//   quiet) with each optional feature off and on, split into RssFile and RssAnon (idle_rss_mb, idle_rss_file_mb,
//   idle_rss_anon_mb, idle_rss_by_feature; bench/lib/idle_rss.ts), and the peak RSS of the hub draining the seed
//   backlog (backlog_peak_rss_mb).
// The ceiling is measured at several concurrency levels (--ceiling-concurrency); the best one wins.
//
// Assumptions: the local clusters may be shared with tests running at the same time, so every phase
// uses fresh namespaces, the hub only watches those (--namespace), a run disturbed by others (an
// apiserver restart, foreign writes to Uuids) is repeated, and the report gives the CPU used by
// other processes during each run so noisy figures can be recognised. Profiling: pass
// --hub-deno-flag=--cpu-prof --hub-deno-flag=--cpu-prof-dir=DIR, then bench/tools/cpuprofile_summary.ts.

import { dirname } from "node:path";
import { BenchCluster } from "./lib/cluster.ts";
import { parseConfig } from "./lib/config.ts";
import { ensureClusters } from "./lib/ensure_clusters.ts";
import { fairnessPhase } from "./phases/fairness.ts";
import { idlePhase } from "./phases/idle.ts";
import { buildPeer, type PeerBuild } from "./lib/peer.ts";
import { buildGoPeer } from "./lib/peer_go.ts";
import { backgroundPhase } from "./phases/background.ts";
import { machine } from "./lib/proc.ts";
import { type FigureInfo, json, markdown, type Row } from "./lib/report.ts";
import { log } from "./lib/run.ts";
import { relistPhase } from "./phases/relist.ts";
import { scalePhase } from "./phases/scale.ts";
import { round } from "./lib/stats.ts";
import { memoryPhase } from "./phases/memory.ts";
import { mirrorPhase } from "./phases/mirror.ts";
import {
  backlogPhase,
  type Comparison,
  comparisonTable,
  kubectlPhase,
  type PhaseContext,
} from "./phases/user_phases.ts";
import { clustersPhase } from "./phases/clusters.ts";
import { clusterProfilesPhase } from "./phases/cluster_profiles.ts";
import { admissionPhase } from "./phases/admission.ts";
import { shardsPhase } from "./phases/shards.ts";
import type { Disturbance } from "./lib/throughput_run.ts";
import { throughputPhase } from "./phases/throughput.ts";

async function main(): Promise<void> {
  const cfg = parseConfig(Deno.args);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const names = await ensureClusters(cfg.clusters);
  const cl = names.map((n) => new BenchCluster(n));
  await Promise.all(cl.map((c) => c.detect()));
  const host = machine();
  log(
    `clusters ${
      names.join(", ")
    }; ${cfg.objects} objects per cluster; concurrency ${cfg.concurrency}; ${cfg.reps} reps; load ${
      (host.load_average as number[]).map((l) => l.toFixed(2)).join(" ")
    }`,
  );

  const rows: Row[] = [];
  const out: Record<string, unknown> = {
    started_at: startedAt,
    command: `deno task bench ${Deno.args.join(" ")}`.trim(),
    machine: host,
    config: {
      clusters: names,
      objects_per_cluster: cfg.objects,
      concurrency: cfg.concurrency,
      create_concurrency_per_cluster: cfg.createConcurrency,
      reps: cfg.reps,
      idle_objects_per_rep: cfg.idleObjects,
      fairness_objects: cfg.fairnessObjects,
      scale_objects_per_cluster: cfg.scaleObjects,
      hub_args: cfg.hubArgs,
      hub_deno_flags: cfg.denoFlags,
      backlog_objects_per_cluster: cfg.backlogObjects,
      ceiling_concurrency_levels: cfg.ceilingConcurrencies,
      shapes: cfg.shapes,
      status_subresource: Object.fromEntries(cl.map((c) => [c.name, c.statusSubresource])),
    },
  };
  let svg: string | undefined;
  const disturbed: Disturbance[] = [];
  out.disturbed_runs_repeated = disturbed;
  const figures: Record<string, FigureInfo> = {};
  out.figures = figures;
  const comparisons: Comparison[] = [];
  out.comparisons = comparisons;
  // The peer is built before any phase runs, so a build failure is known (and reported) up front.
  let peer: PeerBuild | undefined;
  let goPeer: PeerBuild | undefined;
  if (cfg.phases.has("peer") || cfg.phases.has("background")) {
    peer = await buildPeer(log);
    if (peer.ok) log(`peer: built in ${round(peer.buildSeconds, 1)} s`);
    else log(`peer: NOT BUILT, its figures are n/a: ${peer.error}`);
    out.peer_kube_rs = peer.ok
      ? { built: true, build_seconds: round(peer.buildSeconds, 1), binary: peer.binary }
      : { built: false, error: peer.error };
    goPeer = await buildGoPeer(log);
    if (goPeer.ok) log(`go peer: ready in ${round(goPeer.buildSeconds, 1)} s`);
    else log(`go peer: NOT BUILT, its figures are n/a: ${goPeer.error}`);
    out.peer_controller_runtime = goPeer.ok
      ? { built: true, build_seconds: round(goPeer.buildSeconds, 1), binary: goPeer.binary }
      : { built: false, error: goPeer.error };
  }
  // The JSON so far, after every phase: a long run that dies late still leaves what it measured.
  const flush = async () => {
    await Deno.mkdir(dirname(cfg.out), { recursive: true });
    await Deno.writeTextFile(cfg.out, JSON.stringify({ ...out, partial: true }, null, 2) + "\n");
  };
  const ctx: PhaseContext = { cfg, names, cl, peer, goPeer, disturbed, rows, out, figures, comparisons };

  try {
    if (cfg.phases.has("throughput")) svg = await throughputPhase(ctx, host, startedAt);
    await flush();
    if (cfg.phases.has("idle")) await idlePhase(ctx);
    await flush();
    if (cfg.phases.has("fairness")) await fairnessPhase(ctx);
    await flush();
    if (cfg.phases.has("scale")) await scalePhase(ctx);
    await flush();
    if (cfg.phases.has("relist")) await relistPhase(ctx);
    await flush();
    if (cfg.phases.has("backlog")) await backlogPhase(ctx);
    await flush();
    if (cfg.phases.has("kubectl")) await kubectlPhase(ctx);
    await flush();
    if (cfg.phases.has("clusters")) await clustersPhase(ctx);
    if (cfg.phases.has("profiles")) await clusterProfilesPhase(ctx);
    if (cfg.phases.has("admission")) await admissionPhase(ctx);
    if (cfg.phases.has("mirror")) await mirrorPhase(ctx);
    if (cfg.phases.has("shards")) await shardsPhase(ctx);
    await flush();
    if (cfg.phases.has("background")) await backgroundPhase(ctx);
    await flush();
    if (cfg.phases.has("memory")) await memoryPhase(ctx);
  } finally {
    cl.forEach((c) => c.close());
  }

  out.duration_seconds = round((performance.now() - started) / 1000, 1);
  out.table = rows.map((r) => ({ figure: r.key, ...json(r.s, 4), target: r.target, met: r.met }));
  const table = markdown(rows);
  console.log(`\n${table}\n`);
  if (comparisons.length) {
    console.log(`${comparisonTable(comparisons)}\n`);
  }
  console.log(
    `${names.length} clusters, ${cfg.objects} objects each, concurrency ${cfg.concurrency}, ${cfg.reps} repetitions; ` +
      `${host.cpus} × ${host.cpu_model}; took ${out.duration_seconds} s.`,
  );
  await Deno.mkdir(dirname(cfg.out), { recursive: true });
  await Deno.writeTextFile(cfg.out, JSON.stringify(out, null, 2) + "\n");
  if (svg) await Deno.writeTextFile(cfg.svg, svg);
  console.log(`wrote ${cfg.out}${svg ? ` and ${cfg.svg}` : ""}`);
}

if (import.meta.main) {
  await main();
}
