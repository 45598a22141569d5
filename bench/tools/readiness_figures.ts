// Readiness and probe figures against a real hub process on the running local clusters (`deno task clusters:up`):
// /readyz with a labelled Secret at a closed port, /readyz with a ClusterProfile whose ControlPlaneHealthy is False,
// and /healthz, /readyz and /status sizes and times with N clusters registered from a folder of kubeconfig files.
//
//   deno run -A bench/tools/readiness_figures.ts [--clusters 2000] [--samples 20] [--skip secret,profile,folder]
//     [--hub-entry FILE] [--out FILE]
//
// - secret: a hub (`--kubeconfig hub.yaml --clusters all --cluster-secrets NS`, prod from the command line) and a
//   labelled Secret whose kubeconfig names https://127.0.0.1:<closed port>: /readyz's code and notReady once /status
//   shows the Secret's cluster unreachable, and its lastError there;
// - profile: a hub with `--cluster-profiles NS` and a ClusterProfile whose ControlPlaneHealthy is False: /readyz once
//   /status shows it held;
// - folder: N files (one context each, https://127.0.0.1:<closed port>, inline CA and token) in an empty
//   `--cluster-dir`: once all are registered and settled, /healthz and /readyz (`--samples` GETs each: bytes, median
//   and p99 ms), /status (5 GETs: bytes, median ms), and the hub's RSS.
//
// `--hub-entry` runs another checkout's src/cli/main.ts (relative to the repository root), for a before/after.
// Prints one JSON object (and writes it to --out). Figures: bytes, ms, MiB.

import { parseArgs } from "node:util";
import { installClusterProfileCrd } from "../../dev/support/cluster_profile_crd.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { freePort, kubeconfigText, kubectl, kubectlOk, localEndpoint } from "../../dev/support/mod.ts";
import { memoryMb } from "../lib/proc.ts";
import { percentile, round } from "../lib/stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clusters: { type: "string", default: "2000" },
    samples: { type: "string", default: "20" },
    skip: { type: "string", default: "" },
    "hub-entry": { type: "string" },
    out: { type: "string" },
  },
});
const n = Number(values.clusters);
const samples = Number(values.samples);
const skip = new Set(values.skip!.split(",").filter(Boolean));
if (!(n >= 1) || !(samples >= 1)) {
  console.error("readiness_figures: --clusters and --samples must be positive");
  Deno.exit(2);
}
const say = (line: string) => console.error(`[readiness_figures] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const entry = values["hub-entry"];
const prod = localEndpoint("prod");
const suffix = crypto.randomUUID().slice(0, 8);
const dir = await Deno.makeTempDir({ prefix: "bench-readiness-" });
const hubConfig = `${dir}/hub.yaml`;
await Deno.writeTextFile(
  hubConfig,
  kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
);
await Deno.mkdir(`${dir}/empty`);

/** One GET of the hub: status, bytes, milliseconds, and the text. */
async function timedGet(hub: HubProcess, path: string) {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${hub.port}${path}`);
  const text = await res.text();
  return { status: res.status, bytes: new TextEncoder().encode(text).byteLength, ms: performance.now() - t0, text };
}

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const got = await check().catch(() => undefined);
    if (got !== undefined) return got;
    await sleep(500);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The /status entry of `name` (asked for alone where the hub pages, found in the whole document where it does not). */
async function entryOf(hub: HubProcess, name: string): Promise<Record<string, unknown> | undefined> {
  const doc = JSON.parse((await timedGet(hub, `/status?cluster=${encodeURIComponent(name)}`)).text);
  return doc.clusters?.[name];
}

const results: Record<string, unknown> = {
  started_at: new Date().toISOString(),
  command: `deno run -A bench/tools/readiness_figures.ts ${Deno.args.join(" ")}`.trim(),
  hub_entry: entry ?? "src/cli/main.ts",
};

async function secretCase(): Promise<void> {
  const ns = `bench-ready-secret-${suffix}`;
  const name = `r-closed-${suffix}`;
  await kubectlOk("prod", ["create", "namespace", ns]);
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    entry,
    args: ["--cluster-secrets", ns, "--cluster-dir", `${dir}/empty`, "--operators", "uuid", "--namespace", ns],
  });
  try {
    await hub.waitReady(60_000);
    const text = kubeconfigText([{
      name,
      server: `https://127.0.0.1:${freePort()}`,
      caPem: prod.caPem,
      user: { token: crypto.randomUUID() },
    }]);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
        data: { kubeconfig: btoa(text) },
      }),
    });
    const e = await waitFor("the Secret's cluster unreachable", 60_000, async () => {
      const c = await entryOf(hub, name);
      return c?.state === "unreachable" ? c : undefined;
    });
    await sleep(2000);
    const readyz = await timedGet(hub, "/readyz");
    results.secret_at_closed_port = {
      readyz_status: readyz.status,
      not_ready: JSON.parse(readyz.text).notReady,
      state: e.state,
      last_error: e.lastError,
    };
    say(`Secret at a closed port: /readyz ${readyz.status} ${JSON.stringify(JSON.parse(readyz.text).notReady)}`);
  } finally {
    await hub.stop();
    await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  }
}

async function profileCase(): Promise<void> {
  await installClusterProfileCrd("prod");
  const ns = `bench-ready-profile-${suffix}`;
  await kubectlOk("prod", ["create", "namespace", ns]);
  const providerFile = `${dir}/providers.json`;
  await Deno.writeTextFile(
    providerFile,
    JSON.stringify({
      providers: [{
        name: "bench",
        execConfig: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/true" },
      }],
    }),
  );
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    entry,
    args: [
      "--cluster-profiles",
      ns,
      "--clusterprofile-provider-file",
      providerFile,
      "--cluster-dir",
      `${dir}/empty`,
      "--operators",
      "uuid",
      "--namespace",
      ns,
    ],
  });
  const admin = await localKubeClient("prod");
  try {
    await hub.waitReady(60_000);
    const api = `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${ns}/clusterprofiles`;
    await admin.request("POST", api, {
      body: {
        apiVersion: "multicluster.x-k8s.io/v1alpha1",
        kind: "ClusterProfile",
        metadata: { name: "down", namespace: ns },
        spec: { clusterManager: { name: "bench" } },
      },
    });
    const obj = await admin.request("GET", `${api}/down`) as Record<string, unknown>;
    await admin.request("PUT", `${api}/down/status`, {
      body: {
        ...obj,
        status: {
          accessProviders: [{
            name: "bench",
            cluster: { server: prod.server, "certificate-authority-data": btoa(prod.caPem) },
          }],
          conditions: [{
            type: "ControlPlaneHealthy",
            status: "False",
            reason: "Unreachable",
            message: "the control plane does not answer",
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          }],
        },
      },
    });
    const name = `${ns}/down`;
    const e = await waitFor("the profile held", 60_000, async () => {
      const c = await entryOf(hub, name);
      return (c?.condition as { status?: string } | undefined)?.status === "False" ? c : undefined;
    });
    await sleep(2000);
    const readyz = await timedGet(hub, "/readyz");
    results.profile_control_plane_unhealthy = {
      readyz_status: readyz.status,
      not_ready: JSON.parse(readyz.text).notReady,
      state: e.state,
    };
    say(`ClusterProfile False: /readyz ${readyz.status} ${JSON.stringify(JSON.parse(readyz.text).notReady)}`);
  } finally {
    admin.close();
    await hub.stop();
    await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  }
}

async function folderCase(): Promise<void> {
  const folder = `${dir}/folder`;
  await Deno.mkdir(folder);
  const closed = `https://127.0.0.1:${freePort()}`;
  for (let i = 0; i < n; i++) {
    const name = `f-${String(i).padStart(5, "0")}`;
    await Deno.writeTextFile(
      `${folder}/${name}.yaml`,
      kubeconfigText([{ name, server: closed, caPem: prod.caPem, user: { token: crypto.randomUUID() } }]),
    );
  }
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    entry,
    captureLogs: false,
    args: ["--cluster-dir", folder, "--operators", "uuid", "--namespace", "default", "--log-level", "warn"],
  });
  try {
    const t0 = performance.now();
    await waitFor(`${n} folder clusters registered`, 600_000, async () => {
      const text = (await timedGet(hub, "/metrics")).text;
      const m = /^hub_clusters_registered\{provider="folder"\} (\d+)/m.exec(text);
      return Number(m?.[1] ?? 0) >= n ? true : undefined;
    });
    say(`${n} folder clusters registered in ${round((performance.now() - t0) / 1000, 1)} s; settling 20 s`);
    await sleep(20_000);
    const probe = async (path: string) => {
      const got = [];
      for (let i = 0; i < samples; i++) {
        got.push(await timedGet(hub, path));
        await sleep(100);
      }
      const ms = got.map((g) => g.ms);
      return {
        status: got[got.length - 1].status,
        bytes: got[got.length - 1].bytes,
        ms_median: round(percentile(ms, 50), 1),
        ms_p99: round(percentile(ms, 99), 1),
      };
    };
    const healthz = await probe("/healthz");
    const readyz = await probe("/readyz");
    const status = [];
    for (let i = 0; i < 5; i++) status.push(await timedGet(hub, "/status"));
    const statusMs = status.map((s) => s.ms);
    results.folder = {
      clusters: n,
      healthz,
      readyz,
      status: {
        bytes: status[status.length - 1].bytes,
        ms_median: round(percentile(statusMs, 50), 1),
        ms_max: round(Math.max(...statusMs), 1),
      },
      rss_mib: round(memoryMb(hub.pid).rss, 1),
    };
    say(`folder: ${JSON.stringify(results.folder)}`);
  } finally {
    await hub.stop();
  }
}

try {
  if (!skip.has("secret")) await secretCase();
  if (!skip.has("profile")) await profileCase();
  if (!skip.has("folder")) await folderCase();
} finally {
  await Deno.remove(dir, { recursive: true });
}
const text = JSON.stringify(results, null, 2);
console.log(text);
if (values.out) await Deno.writeTextFile(values.out, text + "\n");
