// End-to-end: readiness means the pod can serve. Clusters that providers register (a labelled Secret at a closed port
// or behind a proxy that refuses its tunnel, a ClusterProfile whose control plane is unhealthy or unreported, hundreds
// of dropped kubeconfig files) never make /readyz fail and show untrusted connection errors as one generic reason;
// --readiness-clusters all brings the old rule back; the probes stay small and /status pages.
// deno-lint-ignore-file no-explicit-any -- /status JSON is checked by the tests themselves.

import assert from "node:assert/strict";
import { installClusterProfileCrd } from "../../dev/support/cluster_profile_crd.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import {
  freePort,
  kubeconfigText,
  kubectlOk,
  localEndpoint,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";

/** Hang guard only. */
const HANG_GUARD_MS = 60_000;
/** What /status and the logs above debug say of an untrusted cluster that cannot be reached. */
const GENERIC = "cannot connect to the cluster's server (the hub's debug log has the detail)";
const LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/** prod, from a --kubeconfig file: the command line's cluster (and the home cluster). */
async function hubKubeconfig(dir: { write(name: string, text: string): Promise<string> }): Promise<string> {
  const p = localEndpoint("prod");
  return await dir.write(
    "hub.yaml",
    kubeconfigText([{ name: "prod", server: p.server, caPem: p.caPem, user: { token: p.token } }]),
  );
}

/** A labelled kubeconfig Secret whose only context reaches `server`, optionally through `proxy`. */
function labelledSecret(ns: string, name: string, server: string, proxy?: string): string {
  const doc = JSON.parse(kubeconfigText([{
    name,
    server,
    caPem: localEndpoint("prod").caPem,
    user: { token: crypto.randomUUID() },
  }]));
  if (proxy) doc.clusters[0].cluster["proxy-url"] = proxy;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns, labels: { [LABEL]: "true" } },
    data: { kubeconfig: btoa(JSON.stringify(doc)) },
  });
}

/** A stand-in for a proxy at an address a scanner probes: it refuses every tunnel with 403. */
function refusingProxy(): { url: string; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          await conn.read(new Uint8Array(4096));
          await conn.write(new TextEncoder().encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"));
        } catch { /* the client left */ }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  return { url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`, close: () => listener.close() };
}

/** The JSON log lines about `cluster` that carry an error. */
function errorLines(hub: HubProcess, cluster: string): { level: string; error: string; msg: string }[] {
  return hub.logs.flatMap((l) => {
    try {
      const o = JSON.parse(l);
      return o.cluster === cluster && typeof o.error === "string" ? [o] : [];
    } catch {
      return [];
    }
  });
}

Deno.test("A labelled Secret at a closed port and one behind a proxy that refuses its tunnel leave /readyz at 200 and read the same in /status, the detail only in the debug log; with --readiness-clusters all they make /readyz 503", async () => {
  requireClusters();
  await using ns = await testNamespace("readiness-secret", { contexts: ["prod"] });
  await using dir = await tempDir("readiness-secret");
  const hubConfig = await hubKubeconfig(dir);
  await Deno.mkdir(`${dir.path}/empty`);
  const proxy = refusingProxy();
  const closed = `r-closed-${ns.name.slice(-6)}`;
  const tunnel = `r-tunnel-${ns.name.slice(-6)}`;
  const start = (extra: string[]) =>
    HubProcess.start({
      clusters: ["all"],
      kubeconfigs: [hubConfig],
      args: [
        "--cluster-secrets",
        ns.name,
        "--cluster-dir",
        `${dir.path}/empty`,
        "--namespace",
        ns.name,
        "--operators",
        "uuid",
        ...extra,
      ],
    });
  const hub = start(["--log-level", "debug"]);
  const strict = start(["--readiness-clusters", "all"]);
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await strict.waitReady(HANG_GUARD_MS);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: labelledSecret(ns.name, closed, `https://127.0.0.1:${freePort()}`),
    });
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: labelledSecret(ns.name, tunnel, "https://10.255.255.1:6443", proxy.url),
    });
    const both = (s: any) => s.clusters[closed]?.state === "unreachable" && s.clusters[tunnel]?.state === "unreachable";
    const s = await hub.waitStatus(both, HANG_GUARD_MS, "both Secret clusters unreachable");

    // Ready: neither holds readiness back; prod (the command line's) does, and is watching.
    const readyz = await hub.get("/readyz");
    assert.equal(readyz.status, 200, readyz.text);
    assert.deepEqual(readyz.body.notReady, []);
    assert.equal(readyz.body.clusters[closed].state, "unreachable", "the probes still name their state");
    assert.equal(s.ready, true);
    assert.equal(s.clusters.prod.gatesReadiness, true);
    assert.equal(s.clusters[closed].gatesReadiness, false);
    assert.equal(s.clusters[closed].provider, "secret");

    // No scan oracle: a refused port and a refused tunnel read the same, in /status and in the logs above debug.
    for (const name of [closed, tunnel]) {
      const c = s.clusters[name];
      assert.equal(c.lastError, GENERIC, `${name}: ${c.lastError}`);
      assert.equal(c.operators.uuid.lastError, GENERIC);
      const lines = errorLines(hub, name);
      assert.ok(lines.some((l) => l.level !== "debug"), `${name} logs its failures: ${hub.tail()}`);
      for (const l of lines.filter((l) => l.level !== "debug")) assert.equal(l.error, GENERIC, JSON.stringify(l));
    }
    // The detail is there at debug, and it is what told the two apart.
    const detail = (name: string) => errorLines(hub, name).find((l) => l.level === "debug" && l.error !== GENERIC);
    assert.ok(detail(closed) && detail(tunnel), "the debug log has both details");
    assert.notEqual(detail(closed)!.error, detail(tunnel)!.error);
    assert.doesNotMatch(JSON.stringify(s.clusters[closed]) + JSON.stringify(s.clusters[tunnel]), /refused|tunnel|403/i);

    // The old rule, asked for: every registered cluster holds readiness back.
    await strict.waitStatus(both, HANG_GUARD_MS, "both Secret clusters unreachable (strict)");
    const strictReadyz = await strict.get("/readyz");
    assert.equal(strictReadyz.status, 503);
    assert.deepEqual(strictReadyz.body.notReady, [closed, tunnel].sort());
    assert.equal((await strict.get("/status")).body.clusters[closed].lastError, GENERIC, "trust does not follow");
  } finally {
    proxy.close();
    await Promise.all([hub.stop(), strict.stop()]);
  }
});

Deno.test("A ClusterProfile whose ControlPlaneHealthy is False, and one with no status yet, leave /readyz at 200 while /status shows them held", async () => {
  requireClusters();
  await installClusterProfileCrd("prod");
  await using ns = await testNamespace("readiness-profile", { contexts: ["prod"] });
  await using dir = await tempDir("readiness-profile");
  const hubConfig = await hubKubeconfig(dir);
  await Deno.mkdir(`${dir.path}/empty`);
  // The plugin never runs: neither profile is ever used.
  const providerFile = await dir.write(
    "providers.json",
    JSON.stringify({
      providers: [{ name: "e2e", execConfig: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/true" } }],
    }),
  );
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: [
      "--cluster-profiles",
      ns.name,
      "--clusterprofile-provider-file",
      providerFile,
      "--cluster-dir",
      `${dir.path}/empty`,
      "--namespace",
      ns.name,
      "--operators",
      "uuid",
    ],
  });
  const admin = await localKubeClient("prod");
  try {
    await hub.waitReady(HANG_GUARD_MS);
    const api = `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${ns.name}/clusterprofiles`;
    for (const name of ["down", "new"]) {
      await admin.request("POST", api, {
        body: {
          apiVersion: "multicluster.x-k8s.io/v1alpha1",
          kind: "ClusterProfile",
          metadata: { name, namespace: ns.name },
          spec: { clusterManager: { name: "e2e" } },
        },
      });
    }
    const p = localEndpoint("prod");
    const obj = await admin.request("GET", `${api}/down`) as Record<string, unknown>;
    await admin.request("PUT", `${api}/down/status`, {
      body: {
        ...obj,
        status: {
          accessProviders: [{
            name: "e2e",
            cluster: { server: p.server, "certificate-authority-data": btoa(p.caPem) },
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
    const down = `${ns.name}/down`;
    const fresh = `${ns.name}/new`;
    const s = await hub.waitStatus(
      (s) => s.clusters[down]?.condition?.status === "False" && s.clusters[fresh]?.state === "registering",
      HANG_GUARD_MS,
      "both profiles held",
    );
    assert.equal(s.clusters[down].state, "registering");
    assert.equal(s.clusters[down].gatesReadiness, false);
    assert.equal(s.clusters[fresh].condition.status, "Unknown");
    const readyz = await hub.get("/readyz");
    assert.equal(readyz.status, 200, readyz.text);
    assert.deepEqual(readyz.body.notReady, []);
    assert.equal(s.ready, true);
  } finally {
    admin.close();
    await hub.stop();
  }
});

Deno.test("With 300 clusters registered from dropped kubeconfig files, /healthz and /readyz stay a few kilobytes with a summary of all, and /status walks every cluster page by page", async () => {
  requireClusters();
  await using dir = await tempDir("readiness-folder");
  const hubConfig = await hubKubeconfig(dir);
  const folder = `${dir.path}/clusters`;
  await Deno.mkdir(folder);
  const closed = `https://127.0.0.1:${freePort()}`;
  const p = localEndpoint("prod");
  const names = Array.from({ length: 300 }, (_, i) => `dropped-${String(i).padStart(3, "0")}`);
  await Promise.all(
    names.map((name) =>
      dir.write(
        `clusters/${name}.yaml`,
        kubeconfigText([{ name, server: closed, caPem: p.caPem, user: { token: "x" } }]),
      )
    ),
  );
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-dir", folder, "--namespace", "default", "--operators", "uuid", "--log-level", "warn"],
  });
  try {
    const s = await hub.waitStatus(
      (s) => s.summary?.clusters === 301 && s.summary?.states?.unreachable === 300 && s.clusters.prod?.synced,
      HANG_GUARD_MS,
      "300 dropped clusters unreachable, prod synced",
    );
    assert.deepEqual(s.summary.providers, { folder: 301 });
    assert.equal(s.summary.gatingReadiness, 1, "only prod, the command line's, gates readiness");
    for (const path of ["/healthz", "/readyz"]) {
      const probe = await hub.get(path);
      assert.equal(probe.status, 200, `${path}: ${probe.text.slice(0, 300)}`);
      const bytes = new TextEncoder().encode(probe.text).byteLength;
      assert.ok(bytes < 8 * 1024, `${path} answered ${bytes} bytes`);
      console.log(`figure: ${path} with 301 clusters: ${bytes} bytes`);
      assert.equal(Object.keys(probe.body.clusters)[0], "prod", "the command line's cluster is named first");
      assert.equal(Object.keys(probe.body.clusters).length, 50);
      assert.deepEqual(probe.body.summary, {
        clusters: 301,
        listed: 50,
        omitted: 251,
        states: { watching: 1, unreachable: 300 },
        notReady: 0,
      });
    }
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = (await hub.get(`/status?limit=100${token ? `&continue=${token}` : ""}`)).body;
      pages++;
      assert.ok(Object.keys(page.clusters).length <= 100);
      assert.equal(page.summary.clusters, 301);
      seen.push(...Object.keys(page.clusters));
      token = page.continue;
    } while (token && pages < 10);
    assert.equal(pages, 4);
    assert.deepEqual(seen, [...names, "prod"].sort());
    assert.equal((await hub.get("/status?limit=0")).status, 400);
  } finally {
    await hub.stop();
  }
});
