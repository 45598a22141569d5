// Churn: one labelled kubeconfig Secret rewritten R times a second for S seconds, each version reaching staging through
// another namespace (a change that re-engages), against a real hub process: engage cycles, log bytes, and how soon the
// final version serves.
//
//   deno run -A bench/tools/secret_churn.ts [--rate 100] [--seconds 60] [--hub-entry FILE] [--out FILE]
//
// The hub runs with prod from the command line (`--kubeconfig`), `--clusters all --cluster-secrets NS` and an empty
// `--cluster-dir`, at the default log level. Each write is an unconditional PUT of the Secret (at most 8 in flight);
// version i is staging with its token, scoped to namespace `churn-i` (the context's opt-in), so every write changes the
// endpoint and asks for a re-engage. Counted from the hub's own log lines: `cluster engaged` and `cluster disengaged`
// of that cluster (each engage is a full pre-flight, list and watch), and every byte the hub logged from the first
// write until the final version serves. Prints one JSON object (and writes it to --out).

import { parseArgs } from "node:util";
import { kubeconfigText, kubectl, kubectlOk, localEndpoint } from "../../dev/support/mod.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { round } from "../lib/stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rate: { type: "string", default: "100" },
    seconds: { type: "string", default: "60" },
    "hub-entry": { type: "string" },
    out: { type: "string" },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const say = (line: string) => console.error(`[secret_churn] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ns = `bench-churn-${crypto.randomUUID().slice(0, 8)}`;
const name = "churned";
const dir = await Deno.makeTempDir({ prefix: "bench-churn-" });
const prod = localEndpoint("prod");
const staging = localEndpoint("staging");
await Deno.writeTextFile(
  `${dir}/hub.yaml`,
  kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
);
await Deno.mkdir(`${dir}/empty`);
await kubectlOk("prod", ["create", "namespace", ns]);

/** Version `i`: staging, scoped to namespace `churn-i`. */
function version(i: number): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "s", cluster: { server: staging.server, "certificate-authority-data": btoa(staging.caPem) } }],
    users: [{ name: "u", user: { token: staging.token } }],
    contexts: [{
      name: "c",
      context: {
        cluster: "s",
        user: "u",
        namespace: `churn-${i}`,
        extensions: [{ name: "operator-hub", extension: { scope: "namespace" } }],
      },
    }],
    "current-context": "c",
  });
}
const secret = (i: number) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: ns, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
  data: { kubeconfig: btoa(version(i)) },
});

const hub = HubProcess.start({
  clusters: ["all"],
  kubeconfigs: [`${dir}/hub.yaml`],
  entry: values["hub-entry"],
  args: ["--cluster-secrets", ns, "--cluster-dir", `${dir}/empty`],
});
const admin = await localKubeClient("prod");
const results: Record<string, unknown> = {
  started_at: new Date().toISOString(),
  command: `deno run -A bench/tools/secret_churn.ts ${Deno.args.join(" ")}`.trim(),
  rate_per_s: rate,
  seconds,
};
try {
  await hub.waitReady(120_000);
  await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, { body: secret(0) });
  await hub.waitStatus((s) => s.clusters?.[name]?.namespace === "churn-0", 60_000, "version 0 served");
  await sleep(3000);
  const firstLine = hub.logs.length;

  // R writes a second, at most 8 in flight: the attacker's loop.
  const t0 = performance.now();
  let sent = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  while (performance.now() - t0 < seconds * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate);
    while (sent < due && inFlight.size < 8) {
      const i = ++sent;
      const p: Promise<void> = admin.request("PUT", `/api/v1/namespaces/${ns}/secrets/${name}`, { body: secret(i) })
        .then(() => {}, () => void failed++).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  const writeSeconds = (performance.now() - t0) / 1000;
  // The final version is whatever the apiserver holds now (writes in flight may land in any order).
  const final = await admin.request("GET", `/api/v1/namespaces/${ns}/secrets/${name}`) as {
    data: { kubeconfig: string };
  };
  const finalNs = JSON.parse(atob(final.data.kubeconfig)).contexts[0].context.namespace as string;
  const stopped = performance.now();
  await hub.waitStatus(
    (s) => s.clusters?.[name]?.namespace === finalNs && s.clusters?.[name]?.state === "watching",
    60_000,
    `the final version (${finalNs}) watching`,
  );
  const finalSeconds = (performance.now() - stopped) / 1000;
  const lines = hub.logs.slice(firstLine);
  const mine = (msg: string) =>
    lines.filter((l) => {
      try {
        const j = JSON.parse(l);
        return j.msg === msg && j.cluster === name;
      } catch {
        return false;
      }
    }).length;
  Object.assign(results, {
    writes: sent,
    writes_failed: failed,
    write_seconds: round(writeSeconds, 1),
    engaged: mine("cluster engaged"),
    disengaged: mine("cluster disengaged"),
    log_lines: lines.length,
    log_bytes: lines.reduce((s, l) => s + l.length + 1, 0),
    final_version_watching_s: round(finalSeconds, 2),
  });
  say(JSON.stringify(results));
} finally {
  admin.close();
  await hub.stop();
  await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(results, null, 2));
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(results, null, 2) + "\n");
