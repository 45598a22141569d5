// `--phases admission`: the Website example's validating and mutating webhooks served by one hub for prod, staging and
// dev; server-side dry-run creates sent to each apiserver, and admission p50/p99 read from the apiservers' own
// `apiserver_admission_webhook_admission_duration_seconds` (the time each apiserver spent calling the hub, TLS
// handshake included), beside the hub's own `controller_runtime_webhook_latency_seconds`.
// Kopf cannot run here (no Python Kopf on this machine), so there is no peer figure.

import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { kubectl } from "../../dev/support/mod.ts";
import { log } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD = new URL("../../examples/website_crd.yaml", import.meta.url).pathname;
const WEBHOOK = "image.website.operator-hub.dev";

/** Cumulative bucket counts (le → count) of the validating webhook's admission duration, from one apiserver. */
async function buckets(context: string): Promise<Map<number, number>> {
  const r = await kubectl(context, ["get", "--raw", "/metrics"], { timeoutMs: 30_000 });
  const out = new Map<number, number>();
  for (const line of r.stdout.split("\n")) {
    if (!line.startsWith("apiserver_admission_webhook_admission_duration_seconds_bucket{")) continue;
    if (!line.includes(`name="${WEBHOOK}"`) || !line.includes('type="validating"')) continue;
    const le = line.match(/le="([^"]+)"/)?.[1];
    const v = Number(line.split(" ").pop());
    if (le === undefined) continue;
    const key = le === "+Inf" ? Infinity : Number(le);
    out.set(key, (out.get(key) ?? 0) + v);
  }
  return out;
}

/** The `q` quantile of a histogram given as cumulative (le → count) deltas, interpolated inside its bucket. */
export function histogramQuantile(cumulative: Map<number, number>, q: number): number {
  const les = [...cumulative.keys()].sort((a, b) => a - b);
  const total = cumulative.get(Infinity) ?? cumulative.get(les[les.length - 1]) ?? 0;
  if (!total) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const count = cumulative.get(le)!;
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevCount) / Math.max(1, count - prevCount));
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/** The phase: writes `admission_p50_ms` and `admission_p99_ms` (apiserver-measured) into `ctx.out`. */
export async function admissionPhase(ctx: PhaseContext): Promise<void> {
  const perCluster = ctx.cfg.quick ? 60 : 200;
  const ns = `bench-admission-${crypto.randomUUID().slice(0, 8)}`;
  await Promise.all(CLUSTERS.map(async (c) => {
    await kubectl(c, ["apply", "-f", CRD]);
    await kubectl(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
    await kubectl(c, ["create", "namespace", ns]);
  }));
  const hubName = ns.slice(-8);
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    captureLogs: false,
    args: [
      "--namespace",
      ns,
      "--operators",
      "none",
      "--webhook-bind-address",
      "127.0.0.1:0",
      "--webhook-name",
      hubName,
      "--log-level",
      "warn",
      "examples/website_operator.ts",
    ],
  });
  const clients = await Promise.all(CLUSTERS.map((c) => localKubeClient(c)));
  try {
    await hub.waitStatus(
      (s) => CLUSTERS.every((c) => s.admission?.clusters?.[c]?.configurations === 2),
      120_000,
      "webhook configurations",
    );
    const before = await Promise.all(CLUSTERS.map(buckets));
    const wall: number[] = [];
    await Promise.all(clients.map(async (client) => {
      for (let i = 0; i < perCluster; i++) {
        const t = performance.now();
        await client.request("POST", `/apis/examples.operator-hub.dev/v1/namespaces/${ns}/websites`, {
          query: { dryRun: "All" },
          body: {
            apiVersion: "examples.operator-hub.dev/v1",
            kind: "Website",
            metadata: { name: `w${i}`, namespace: ns },
            spec: { image: "web:1" },
          },
        });
        wall.push(performance.now() - t);
      }
    }));
    const after = await Promise.all(CLUSTERS.map(buckets));
    const delta = new Map<number, number>();
    for (const [i, b] of after.entries()) {
      for (const [le, v] of b) delta.set(le, (delta.get(le) ?? 0) + v - (before[i].get(le) ?? 0));
    }
    const calls = delta.get(Infinity) ?? 0;
    const p50 = histogramQuantile(delta, 0.5) * 1000;
    const p99 = histogramQuantile(delta, 0.99) * 1000;
    const hubMetrics = (await hub.get("/metrics")).text;
    const hubSum = [...hubMetrics.matchAll(/controller_runtime_webhook_latency_seconds_sum\{[^}]*\} ([\d.e-]+)/g)]
      .reduce((s, m) => s + Number(m[1]), 0);
    const hubCount = [...hubMetrics.matchAll(/controller_runtime_webhook_latency_seconds_count\{[^}]*\} (\d+)/g)]
      .reduce((s, m) => s + Number(m[1]), 0);
    const request = summarize(wall);
    log(
      `admission: ${calls} validating calls seen by the apiservers: p50 ${p50.toFixed(2)} ms, p99 ${
        p99.toFixed(2)
      } ms (apiserver_admission_webhook_admission_duration_seconds); the hub's own mean ${
        (hubSum / Math.max(1, hubCount) * 1000).toFixed(2)
      } ms over ${hubCount} reviews; dry-run create round trip median ${request.median.toFixed(1)} ms`,
    );
    ctx.out.admission_p50_ms = round(p50, 2);
    ctx.out.admission_p99_ms = round(p99, 2);
    ctx.out.admission = {
      calls,
      hub_mean_ms: round(hubSum / Math.max(1, hubCount) * 1000, 3),
      dry_run_create_median_ms: round(request.median, 1),
      kopf: "not run: no Python Kopf on this machine",
    };
    ctx.rows.push({
      key: "admission_p50_ms",
      label: `admission_p50_ms (apiserver-measured, ${calls} validating calls over 3 clusters)`,
      s: summarize([p50]),
      unit: "ms",
      digits: 2,
    }, {
      key: "admission_p99_ms",
      label: "admission_p99_ms (apiserver-measured)",
      s: summarize([p99]),
      unit: "ms",
      digits: 2,
    });
  } finally {
    for (const c of clients) c.close();
    await hub.stop();
    await Promise.all(CLUSTERS.map((c) => kubectl(c, ["delete", "namespace", ns, "--wait=false"])));
    for (const c of CLUSTERS) {
      await kubectl(c, [
        "delete",
        "validatingwebhookconfigurations,mutatingwebhookconfigurations",
        "-l",
        `operator-hub.dev/webhook-hub=${hubName}`,
      ]);
    }
  }
}
