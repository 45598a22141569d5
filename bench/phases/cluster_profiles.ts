// `--phases profiles`: 1,000 SIG-Multicluster ClusterProfiles registered at once in the home cluster (prod), each a
// cluster reached through the tests' real exec plugin (dev/build/exec_plugin): hub spawn → every profile `watching`,
// against the registration goal the Secrets and tenant contexts meet (`clusters_1000_ready_s` ≤ 10 s).

import { ensureExecPlugin } from "../../dev/build/build_exec_plugin.ts";
import { installClusterProfileCrd } from "../../dev/support/cluster_profile_crd.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { kubeconfigText, kubectl, localEndpoint } from "../../dev/support/mod.ts";
import { cpuMs } from "../lib/proc.ts";
import { log } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

const API = "/apis/multicluster.x-k8s.io/v1alpha1";

/** Writes `n` healthy profiles (half pointing at staging, half at dev), `concurrency` requests at a time. */
async function writeProfiles(ns: string, n: number, concurrency = 16): Promise<void> {
  const admin = await localKubeClient("prod");
  try {
    const targets = ["staging", "dev"].map((c) => ({ c, e: localEndpoint(c) }));
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const { c, e } = targets[i % 2];
        const name = `bench-${i}`;
        const obj = await admin.request("POST", `${API}/namespaces/${ns}/clusterprofiles`, {
          body: {
            apiVersion: "multicluster.x-k8s.io/v1alpha1",
            kind: "ClusterProfile",
            metadata: { name, namespace: ns },
            spec: { clusterManager: { name: "bench" } },
          },
        }) as Record<string, unknown>;
        obj.status = {
          accessProviders: [{
            name: "bench-token",
            cluster: {
              server: e.server,
              "certificate-authority-data": btoa(e.caPem),
              extensions: [{ name: "client.authentication.k8s.io/exec", extension: { clusterName: c } }],
            },
          }],
          conditions: [{
            type: "ControlPlaneHealthy",
            status: "True",
            reason: "Healthy",
            message: "bench",
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          }],
        };
        await admin.request("PUT", `${API}/namespaces/${ns}/clusterprofiles/${name}/status`, { body: obj });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    admin.close();
  }
}

/** The phase: writes `cluster_profiles_1000_watching_s` (and the hub's CPU for it) into `ctx.out`. */
export async function clusterProfilesPhase(ctx: PhaseContext): Promise<void> {
  const n = ctx.cfg.quick ? 300 : 1000;
  const plugin = await ensureExecPlugin(log);
  await installClusterProfileCrd("prod");
  const ns = `bench-profiles-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: "bench-profiles-" });
  await kubectl("prod", ["create", "namespace", ns]);
  try {
    await Deno.mkdir(`${dir}/tokens`);
    for (const c of ["staging", "dev"]) await Deno.writeTextFile(`${dir}/tokens/${c}`, localEndpoint(c).token);
    await Deno.writeTextFile(
      `${dir}/providers.json`,
      JSON.stringify({
        providers: [{
          name: "bench-token",
          execConfig: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: plugin,
            args: ["--token-dir", `${dir}/tokens`, "--expires-in", "1h"],
            provideClusterInfo: true,
          },
        }],
      }),
    );
    const p = localEndpoint("prod");
    await Deno.writeTextFile(
      `${dir}/hub.yaml`,
      kubeconfigText([{ name: "prod", server: p.server, caPem: p.caPem, user: { token: p.token } }]),
    );
    await Deno.mkdir(`${dir}/empty`);
    const wroteAt = performance.now();
    await writeProfiles(ns, n);
    log(`profiles: ${n} ClusterProfiles written in ${((performance.now() - wroteAt) / 1000).toFixed(1)} s`);
    const started = performance.now();
    const hub = HubProcess.start({
      clusters: ["all"],
      kubeconfigs: [`${dir}/hub.yaml`],
      captureLogs: false,
      args: [
        "--cluster-profiles",
        ns,
        "--clusterprofile-provider-file",
        `${dir}/providers.json`,
        "--cluster-dir",
        `${dir}/empty`,
        // One namespace per cluster, as the tenant contexts of `--phases clusters` are scoped to one.
        "--namespace",
        ns,
        "--operators",
        "uuid",
        "--log-level",
        "warn",
      ],
    });
    try {
      const all = await hub.waitStatus(
        (s) => {
          // /status lists one page of clusters; its summary counts all of them (the hub's own prod watches too).
          const sum = s.summary;
          return sum?.providers?.["cluster-profile"] === n && sum.states?.watching === sum.clusters;
        },
        600_000,
        `${n} profiles watching`,
      );
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuMs(hub.pid);
      const providers = all.providers["cluster-profile"];
      log(`profiles: ${n} ClusterProfiles → all watching ${seconds.toFixed(2)} s after spawn (hub CPU ${cpu} ms)`);
      ctx.out.cluster_profiles_1000_watching_s = round(seconds, 2);
      ctx.out.cluster_profiles = { profiles: n, hub_cpu_ms: cpu, provider_errors: providers.errors.length };
      ctx.rows.push({
        key: "cluster_profiles_1000_watching_s",
        label: `cluster_profiles_1000_watching_s (${n} ClusterProfiles, spawn → all watching)`,
        s: summarize([seconds]),
        unit: "s",
        target: "≤ 10",
        met: seconds <= 10,
        digits: 2,
      });
    } finally {
      await hub.stop();
    }
  } finally {
    await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
