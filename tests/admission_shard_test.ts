// End-to-end: admission with two --shard replicas behind what a Service would be (a round-robin TCP forwarder,
// tests/support/round_robin_forwarder.ts), both serving one certificate from --webhook-cert-dir (as cert-manager mounts
// it) and installing --webhook-url of the forwarder. Each replica reaches each cluster through a proxy of its own, so
// the writes of each replica are counted per cluster at the proxies: only a cluster's owner writes its configurations;
// both replicas answer admission for every cluster; after one is SIGKILLed the survivor answers at once (a bad object
// refused with the handler's message, a good one admitted through a Fail-policy webhook, other writes unaffected) and,
// once the dead one's Leases expire, writes the configurations of its clusters.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the test itself.

import assert from "node:assert/strict";
import { SelfMadeCertificates } from "../src/hub/admission/mod.ts";
import { waitFor } from "../dev/support/cluster_api.ts";
import { freePort, HubProcess, runHubCli } from "../dev/support/hub_process.ts";
import type { InterceptProxy } from "./support/intercept_proxy.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";
import { applySharedCrd, kubectl, kubectlOk, testNamespace } from "./support/mod.ts";
import { RoundRobinForwarder } from "./support/round_robin_forwarder.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const FILES = ["examples/website_operator.ts", "tests/fixtures/admission_strict_operator.ts"];
const KUBECONFIG = new URL("../clusters/local.yaml", import.meta.url).pathname;
/** Short Leases, as tests/production/shard_test.ts: a dead replica's clusters are free 6 s after its last renewal. */
const TIMINGS = ["--shard-lease-duration", "6", "--shard-renew-deadline", "4", "--shard-renew-period", "1"];
/** The webhooks' timeoutSeconds (the Website's 5 s): an answer within it is an answer in time. */
const APISERVER_TIMEOUT_MS = 5_000;

function website(ns: string, name: string, spec: Record<string, string>, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: "examples.operator-hub.dev/v1",
    kind: "Website",
    metadata: { name, namespace: ns, labels },
    spec,
  });
}

const apply = (c: string, body: string, ...extra: string[]) =>
  kubectl(c, ["apply", ...extra, "-f", "-"], { stdin: body });

/** Writes (anything but reads) of webhook configurations a replica sent through `proxy` since record `from`. */
function configurationWrites(proxy: InterceptProxy, from: number): number {
  return proxy.records.slice(from).filter((r) =>
    r.method !== "GET" && r.path.startsWith("/apis/admissionregistration.k8s.io/")
  ).length;
}

/** Calls a replica's metrics report for `cluster`, any webhook, any code. */
function answered(metrics: string, cluster: string): number {
  let n = 0;
  for (const line of metrics.split("\n")) {
    const m = line.match(/^controller_runtime_webhook_requests_total\{[^}]*cluster="([^"]+)"[^}]*\} (\d+)/);
    if (m && m[1] === cluster) n += Number(m[2]);
  }
  return n;
}

Deno.test("Admission with two --shard replicas behind one forwarder: only each cluster's owner writes its configurations, both answer every cluster, a SIGKILLed replica's clusters keep answering and pass to the survivor", async () => {
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  await using ns = await testNamespace("admission-shard", { contexts: CLUSTERS });
  const hubName = ns.name.slice(-8);
  const vName = `operator-hub-website-${hubName}`;
  const dir = await Deno.makeTempDir({ prefix: "admission-shard-" });
  // One CA and serving certificate for both replicas, as a cert-manager Secret mounted in each pod.
  const certs = await SelfMadeCertificates.create();
  await Deno.writeTextFile(`${dir}/tls.crt`, certs.current().cert);
  await Deno.writeTextFile(`${dir}/tls.key`, certs.current().key);
  await Deno.writeTextFile(`${dir}/ca.crt`, certs.caBundle());
  const ports = [freePort(), freePort()];
  const service = new RoundRobinForwarder(ports);
  // proxies[r][c]: replica r's way to cluster c.
  const proxies: Record<string, InterceptProxy>[] = [];
  const hubs: HubProcess[] = [];
  const start = async (r: number) => {
    proxies[r] = Object.fromEntries(await Promise.all(CLUSTERS.map(async (c) => [c, await proxyInFrontOf(c)])));
    const kubeconfigs = await Promise.all(CLUSTERS.map(async (c) => {
      const file = `${dir}/kubeconfig-${r}-${c}.json`;
      await Deno.writeTextFile(file, adminKubeconfigVia(c, proxies[r][c].url, c));
      return file;
    }));
    hubs[r] = HubProcess.start({
      clusters: CLUSTERS,
      kubeconfigs,
      args: [
        "--namespace",
        ns.name,
        "--operators",
        "none",
        "--shard",
        "--shard-id",
        `adm-${hubName}`,
        "--leader-elect-namespace",
        ns.name,
        ...TIMINGS,
        "--webhook-bind-address",
        `127.0.0.1:${ports[r]}`,
        "--webhook-cert-dir",
        dir,
        "--webhook-url",
        `https://127.0.0.1:${service.port}`,
        "--webhook-name",
        hubName,
        ...FILES,
      ],
    });
  };
  const statuses = () => Promise.all(hubs.map(async (h) => h.exited ? undefined : (await h.get("/status")).body));
  /** Every live replica agrees on one live owner per cluster, which alone installs its configurations (3). */
  const settled = async () => {
    const ss = await statuses();
    const live = ss.filter((s) => s !== undefined);
    const ids = live.map((s) => s.shard?.identity);
    for (const c of CLUSTERS) {
      const owner = live[0]?.shard?.clusters?.[c];
      if (!owner || !ids.includes(owner) || live.some((s) => s.shard.clusters[c] !== owner)) return undefined;
      for (const s of live) {
        const mine = s.admission?.clusters?.[c];
        if (s.shard.identity === owner ? mine?.configurations !== 3 || mine.lastError !== null : mine) return undefined;
      }
    }
    return live.every((s) => s.shard.peers.filter((p: any) => p.live).length === live.length) && ss;
  };
  const ownerIndex = (ss: any[], c: string) =>
    ss.findIndex((s) => s?.shard?.identity === ss.find(Boolean).shard.clusters[c]);
  try {
    await Promise.all([start(0), start(1)]);
    let ss = await waitFor(settled, "two replicas agreeing on one owner per cluster, each installing its own", 60_000);
    const owners = Object.fromEntries(CLUSTERS.map((c) => [c, ownerIndex(ss, c)]));
    console.log(`owners: ${CLUSTERS.map((c) => `${c}=${owners[c] === 0 ? "A" : "B"}`).join(" ")}`);
    for (const c of CLUSTERS) {
      const cfg = JSON.parse(await kubectlOk(c, ["get", "validatingwebhookconfiguration", vName, "-o", "json"]));
      assert.equal(
        cfg.webhooks[0].clientConfig.url,
        `https://127.0.0.1:${service.port}/admission/website/validating/image/${c}`,
      );
      assert.equal(atob(cfg.webhooks[0].clientConfig.caBundle), certs.caBundle(), `${c}: the mounted ca.crt`);
    }

    // Only the owner writes: every configuration deleted by hand comes back, written by its cluster's owner alone.
    const marks = proxies.map((p) => Object.fromEntries(CLUSTERS.map((c) => [c, p[c].records.length])));
    await Promise.all(
      CLUSTERS.map((c) =>
        kubectlOk(c, ["delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration", vName])
      ),
    );
    await waitFor(
      async () => {
        const got = await Promise.all(
          CLUSTERS.map((c) =>
            kubectl(c, ["get", "validatingwebhookconfiguration,mutatingwebhookconfiguration", vName, "-o", "name"])
          ),
        );
        return got.every((g) => g.code === 0 && g.stdout.trim().split("\n").length === 2) || undefined;
      },
      "every configuration recreated",
      20_000,
    );
    ss = await waitFor(settled, "settled again", 20_000);
    for (const c of CLUSTERS) {
      const byOwner = configurationWrites(proxies[owners[c]][c], marks[owners[c]][c]);
      const byOther = configurationWrites(proxies[1 - owners[c]][c], marks[1 - owners[c]][c]);
      assert.ok(byOwner >= 2, `${c}: its owner recreated both configurations (${byOwner} writes)`);
      assert.equal(byOther, 0, `${c}: the other replica wrote ${byOther} times`);
    }

    // Both replicas answer admission for every cluster (the forwarder spreads connections; calls in parallel open
    // several per apiserver).
    await waitFor(
      async () => {
        await Promise.all(
          CLUSTERS.flatMap((c) =>
            [0, 1, 2].map((i) => apply(c, website(ns.name, `spread-${i}`, { image: "web:1" }), "--dry-run=server"))
          ),
        );
        const ms = await Promise.all(hubs.map(async (h) => (await h.get("/metrics")).text));
        if (CLUSTERS.every((c) => ms.every((m) => answered(m, c) > 0))) return true;
        // An apiserver that kept one connection alive would reuse it forever: the next attempt's calls open new
        // connections, which the forwarder hands to the replicas in turn.
        service.dropConnections();
        return undefined;
      },
      "both replicas answering for prod, staging and dev",
      30_000,
    );

    // SIGKILL the replica that owns more clusters: its Leases stay held for up to 6 s.
    const dead = CLUSTERS.filter((c) => owners[c] === 0).length >= 2 ? 0 : 1;
    const alive = 1 - dead;
    const orphaned = CLUSTERS.filter((c) => owners[c] === dead);
    await hubs[dead].kill();
    const killedAt = Date.now();
    const took: number[] = [];
    await Promise.all(CLUSTERS.map(async (c) => {
      for (let i = 0; i < 3; i++) {
        let t = Date.now();
        const bad = await apply(c, website(ns.name, `bad-${i}`, { image: "web:latest" }));
        took.push(Date.now() - t);
        assert.notEqual(bad.code, 0, `${c}: a :latest image must be refused after the kill (Ignore would let it in)`);
        assert.match(bad.stderr, /denied the request: spec.image web:latest: pin a version instead of :latest/, c);
        t = Date.now();
        const good = await apply(c, website(ns.name, `good-${i}`, { image: "web:2" }, { strict: "true" }));
        took.push(Date.now() - t);
        assert.equal(good.code, 0, `${c}: admitted through the Fail-policy webhook: ${good.stderr}`);
      }
      const other = await kubectl(c, ["create", "configmap", "unrelated", "-n", ns.name, "--from-literal=a=b"]);
      assert.equal(other.code, 0, `${c}: other writes are not blocked: ${other.stderr}`);
    }));
    const stored = JSON.parse(await kubectlOk("dev", ["get", "website", "good-0", "-n", ns.name, "-o", "json"]));
    assert.equal(stored.spec.content, "<h1>good-0</h1>", "the survivor's mutating handler filled the default");
    const inLeases = Date.now() - killedAt;
    console.log(
      `after the SIGKILL of the owner of ${orphaned.join(",")}: ${took.length} applies in ${inLeases} ms, ` +
        `slowest ${Math.max(...took)} ms; forwarder connections A=${service.connections[0]} ` +
        `B=${service.connections[1]}, dropped ${service.dropped}`,
    );
    assert.ok(Math.max(...took) < APISERVER_TIMEOUT_MS + 2_000, `an apply took ${Math.max(...took)} ms`);
    assert.equal(service.dropped, 0, "the survivor took every connection");

    // The survivor owns every cluster and keeps the dead one's configurations: deleted there, it writes them back.
    await waitFor(
      async () => {
        const s = (await hubs[alive].get("/status")).body;
        return CLUSTERS.every((c) =>
          s.shard?.clusters?.[c] === s.shard.identity && s.admission?.clusters?.[c]?.configurations === 3
        ) || undefined;
      },
      "the survivor owning and installing every cluster",
      30_000,
    );
    const after = Object.fromEntries(CLUSTERS.map((c) => [c, proxies[alive][c].records.length]));
    await Promise.all(orphaned.map((c) => kubectlOk(c, ["delete", "validatingwebhookconfiguration", vName])));
    for (const c of orphaned) {
      await waitFor(
        async () => (await kubectl(c, ["get", "validatingwebhookconfiguration", vName])).code === 0 || undefined,
        `${c}: recreated by the survivor`,
        15_000,
      );
      assert.ok(configurationWrites(proxies[alive][c], after[c]) >= 1, `${c}: the survivor wrote it`);
    }
    assert.equal((await hubs[alive].stop()).code, 0, hubs[alive].tail());
  } finally {
    await Promise.all(hubs.map((h) => h.kill()));
    await runHubCli([
      "cleanup",
      "--kubeconfig",
      KUBECONFIG,
      "--clusters",
      CLUSTERS.join(","),
      "--namespace",
      ns.name,
      "--webhook-name",
      hubName,
    ]);
    await service.close();
    await Promise.all(proxies.flatMap((p) => Object.values(p).map((x) => x.close())));
    await Deno.remove(dir, { recursive: true });
  }
});
