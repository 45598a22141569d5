// `--phases background`: what objects no operator needs cost the hub. Each cluster gets namespaces of the phase's own
// holding ConfigMaps and Secrets of 4 KiB and Deployments (the controller manager makes their ReplicaSets and Pods,
// which stay Pending: the local clusters have no nodes); the backlog (bench/lib/backlog.ts) is drained before and after
// the fill, by the hub with its default operators, the hub with `--operators uuid`, the kube-rs peer and the
// controller-runtime peer, alternating in the same run.
//
// Guarantees: the namespaces the phase made (and with them everything in them) are deleted when it ends, also when it
// fails; it waits (at most 3 minutes) for the namespace controller to finish, so the next phase starts on clean
// clusters. The hub watches the backlog's namespace and the background namespaces (the background is in its view as
// it would be for a hub watching all namespaces, without acting on other people's Uuids in the shared clusters); the
// peers watch the backlog's namespace only (an all-namespace Uuid watch holds no ConfigMap or Secret either).
// `background_rss_growth_mb` is the hub's (default operators) RSS once drained and quiet with the background minus
// without it, per repetition, median over them.

import type { BenchCluster } from "../lib/cluster.ts";
import { type BacklogRun, backlogRun } from "../lib/backlog.ts";
import { sleep } from "../lib/hub.ts";
import { figure, json, type Row, shapeOf } from "../lib/report.ts";
import { type HubExtras, log, nsName, type OperatorKind } from "../lib/run.ts";
import { round, summarize, type Summary } from "../lib/stats.ts";
import { goPeerBinary, peerBinary, type PhaseContext } from "./user_phases.ts";

/** The four operators measured: the hub twice (default operators, Uuid only) and the two peers. */
type Variant = "hub_default" | "hub_uuid" | "peer_kube_rs" | "peer_controller_runtime";
const VARIANTS: Variant[] = ["hub_default", "hub_uuid", "peer_kube_rs", "peer_controller_runtime"];

/** Objects per cluster the phase fills in. */
export interface BackgroundSize {
  configMaps: number;
  secrets: number;
  deployments: number;
  /** Bytes of data per ConfigMap and Secret. */
  bytes: number;
}

export const FULL_BACKGROUND: BackgroundSize = { configMaps: 3000, secrets: 1000, deployments: 200, bytes: 4096 };
export const QUICK_BACKGROUND: BackgroundSize = { configMaps: 300, secrets: 100, deployments: 20, bytes: 4096 };

export async function backgroundPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl } = ctx;
  const size = cfg.background ?? (cfg.quick ? QUICK_BACKGROUND : FULL_BACKGROUND);
  const dataNs = nsName("bg-data"), appsNs = nsName("bg-apps");
  const kinds: Record<Variant, { kind: OperatorKind; bin?: string; extras?: HubExtras }> = {
    hub_default: { kind: "hub", extras: { namespaces: [dataNs, appsNs] } },
    hub_uuid: { kind: "hub", extras: { namespaces: [dataNs, appsNs], args: ["--operators", "uuid"] } },
    peer_kube_rs: { kind: "peer", bin: peerBinary(ctx) },
    peer_controller_runtime: { kind: "go_peer", bin: goPeerBinary(ctx) },
  };
  const variants = VARIANTS.filter((v) => kinds[v].kind === "hub" || kinds[v].bin);
  const runs: Record<"without" | "with", Record<Variant, BacklogRun[]>> = {
    without: { hub_default: [], hub_uuid: [], peer_kube_rs: [], peer_controller_runtime: [] },
    with: { hub_default: [], hub_uuid: [], peer_kube_rs: [], peer_controller_runtime: [] },
  };
  const failures: { when: string; rep: number; variant: Variant; error: string }[] = [];
  const round_ = async (when: "without" | "with") => {
    for (let r = 0; r < cfg.reps; r++) {
      // Rotate which goes first, as the other phases do.
      const order = variants.map((_, i) => variants[(i + r) % variants.length]);
      for (const v of order) {
        const k = kinds[v];
        const once = () =>
          backlogRun(cfg, names, cl, {
            kind: k.kind,
            peerBinary: k.kind === "peer" ? k.bin : undefined,
            goPeerBinary: k.kind === "go_peer" ? k.bin : undefined,
            hubExtras: k.extras,
          });
        // A run that fails (an operator not ready in 2 minutes on a machine others load) is tried once more, and
        // recorded in the JSON; the phase goes on, so the background is still removed and the other figures kept.
        let run: BacklogRun;
        try {
          run = await once();
        } catch (err) {
          failures.push({ when, rep: r + 1, variant: v, error: (err as Error).message.split("\n")[0] });
          log(`background ${when} rep ${r + 1} ${v}: failed (${failures.at(-1)!.error}); once more`);
          run = await once();
        }
        runs[when][v].push(run);
        log(
          `background ${when} rep ${r + 1} ${v}: drained ${round(run.seconds, 2)} s, RSS ${round(run.rssMb!, 1)} MB, ` +
            `peak ${round(run.peakRssMb!, 1)} MB, CPU ${round(run.cpuMs!, 0)} ms, writes/obj ${
              round(run.writesPerObject, 3)
            }, load ${round(run.load1, 1)}${run.missing ? `, ${run.missing} MISSING` : ""}`,
        );
      }
    }
  };

  await Promise.all(cl.flatMap((c) => [c.createNamespace(dataNs), c.createNamespace(appsNs)]));
  let fill: Record<string, unknown> = {};
  try {
    await round_("without");
    const t0 = performance.now();
    const made = await Promise.all(cl.map((c) => fillBackground(c, dataNs, appsNs, size)));
    fill = { seconds: round((performance.now() - t0) / 1000, 1), per_cluster: made };
    log(`background: filled in ${fill.seconds} s: ${JSON.stringify(made)}`);
    await round_("with");
  } finally {
    await removeNamespaces(cl, [dataNs, appsNs]);
  }

  const growth = (v: Variant, f: (r: BacklogRun) => number): Summary =>
    summarize(runs.with[v].map((w, i) => f(w) - f(runs.without[v][i])));
  const info = figure({
    objects: cfg.backlogObjects,
    creation: "kubectl apply",
    shape: shapeOf(cl),
    startup: true,
    runs: [...Object.values(runs.without).flat(), ...Object.values(runs.with).flat()],
  });
  const put = (key: string, s: Summary, digits = 2) => {
    ctx.out[key] = json(s, digits);
    ctx.figures[key] = info;
  };
  const rssGrowth = growth("hub_default", (r) => r.rssMb!);
  put("background_rss_growth_mb", rssGrowth);
  put("background_peak_rss_growth_mb", growth("hub_default", (r) => r.peakRssMb!));
  for (const v of variants) {
    put(`background_${v}_rss_growth_mb`, growth(v, (r) => r.rssMb!));
    put(`background_${v}_peak_rss_mb`, summarize(runs.with[v].map((r) => r.peakRssMb!)), 1);
    put(`background_${v}_seconds_to_drain`, summarize(runs.with[v].map((r) => r.seconds)));
  }
  if (runs.with.peer_controller_runtime.length) {
    put(
      "background_peer_controller_runtime_rss_ratio",
      summarize(runs.with.hub_default.map((h, i) => h.peakRssMb! / runs.with.peer_controller_runtime[i].peakRssMb!)),
    );
  }
  ctx.out.background = { size, namespaces: [dataNs, appsNs], fill, failures, runs };
  const label = `background (${size.configMaps} ConfigMaps, ${size.secrets} Secrets of ${size.bytes} B, ` +
    `${size.deployments} Deployments per cluster), ${names.length} × ${cfg.backlogObjects} backlog`;
  const rows: Row[] = [{
    key: "background_rss_growth_mb",
    label: `${label}: hub (default operators) RSS with − without`,
    s: rssGrowth,
    unit: "MB",
    target: "≤ 3",
    met: rssGrowth.median <= 3,
    digits: 1,
  }];
  for (const v of variants) {
    rows.push({
      key: `background_${v}_peak_rss_mb`,
      label: `${label}: ${v} peak RSS with the background`,
      s: summarize(runs.with[v].map((r) => r.peakRssMb!)),
      unit: "MB",
      digits: 1,
    });
  }
  ctx.rows.push(...rows);
}

/** Fills one cluster: ConfigMaps and Secrets in `dataNs`, Deployments in `appsNs`; waits for their Pods. */
async function fillBackground(
  c: BenchCluster,
  dataNs: string,
  appsNs: string,
  size: BackgroundSize,
): Promise<Record<string, number>> {
  const text = "x".repeat(size.bytes);
  const bytes = new Uint8Array(size.bytes);
  const items: [string, unknown][] = [];
  for (let i = 0; i < size.configMaps; i++) {
    items.push([`/api/v1/namespaces/${dataNs}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `bg-cm-${i}`, labels: { app: `bg-${i % 50}` } },
      data: { payload: text },
    }]);
  }
  for (let i = 0; i < size.secrets; i++) {
    crypto.getRandomValues(bytes);
    items.push([`/api/v1/namespaces/${dataNs}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `bg-secret-${i}` },
      type: "Opaque",
      data: { payload: btoa(String.fromCharCode(...bytes)) },
    }]);
  }
  for (let i = 0; i < size.deployments; i++) {
    const labels = { app: `bg-app-${i}` };
    items.push([`/apis/apps/v1/namespaces/${appsNs}/deployments`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: `bg-app-${i}`, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "app", image: "registry.invalid/bench/app:1", resources: {} }] },
        },
      },
    }]);
  }
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < items.length) {
      const [path, body] = items[next++];
      await c.request("POST", path, body);
    }
  }));
  // The controller manager makes a ReplicaSet and a Pod per Deployment; wait for them (at most 2 minutes).
  const count = async (path: string) => (await c.request<{ items: unknown[] }>("GET", path)).items.length;
  const deadline = performance.now() + 120_000;
  let pods = 0, replicaSets = 0;
  while (performance.now() < deadline) {
    [pods, replicaSets] = await Promise.all([
      count(`/api/v1/namespaces/${appsNs}/pods`),
      count(`/apis/apps/v1/namespaces/${appsNs}/replicasets`),
    ]);
    if (pods >= size.deployments && replicaSets >= size.deployments) break;
    await sleep(1000);
  }
  if (pods < size.deployments) log(`background: ${c.name}: only ${pods} of ${size.deployments} Pods after 2 minutes`);
  return { configMaps: size.configMaps, secrets: size.secrets, deployments: size.deployments, replicaSets, pods };
}

/** Deletes `namespaces` in every cluster and waits (at most 3 minutes) until they are gone. */
async function removeNamespaces(cl: BenchCluster[], namespaces: string[]): Promise<void> {
  await Promise.all(cl.map(async (c) => {
    for (const ns of namespaces) {
      await c.request("DELETE", `/api/v1/namespaces/${ns}`).catch((err) => log(`background: ${err}`));
    }
    const deadline = performance.now() + 180_000;
    for (const ns of namespaces) {
      while (performance.now() < deadline) {
        try {
          await c.request("GET", `/api/v1/namespaces/${ns}`);
        } catch {
          break;
        }
        await sleep(1000);
      }
    }
  }));
  log(`background: namespaces ${namespaces.join(", ")} removed`);
}
