// End-to-end: one hub process serves Uuids in prod, staging and dev on real kube-apiservers.

import assert from "node:assert/strict";
import { type ClusterApi, localApi, UUID_V4, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { installProductionCrd, installSeedCrd, kubectlOk, testNamespace } from "./support/mod.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";

const CLUSTERS = ["prod", "staging", "dev"];

function uuidManifest(namespace: string, name: string): string {
  return `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;
}

async function allAssigned(api: ClusterApi, namespace: string, count: number): Promise<Map<string, unknown>> {
  return await waitFor(
    async () => {
      const m = await api.uuidsOf(namespace);
      return m.size === count && [...m.values()].every((u) => typeof u === "string" && UUID_V4.test(u)) ? m : undefined;
    },
    `${count} Uuids with a UUID in ${api.ep.name}/${namespace}`,
    120_000,
  );
}

Deno.test("The hub gives every Uuid applied with kubectl in prod, staging and dev one v4 UUID and state Ok, with one write each", async () => {
  const ns = await testNamespace("e2e");
  const apis = CLUSTERS.map((c) => localApi(c));
  const writesBefore = await Promise.all(apis.map((a) => a.uuidWrites()));
  const hub = HubProcess.start({ clusters: CLUSTERS });
  try {
    await hub.waitReady();
    for (const c of CLUSTERS) {
      const file = await Deno.makeTempFile({ suffix: ".yaml" });
      await Deno.writeTextFile(file, [1, 2, 3].map((i) => uuidManifest(ns.name, `item-${i}`)).join("---\n"));
      await kubectlOk(c, ["apply", "-f", file]);
      await Deno.remove(file);
    }
    const assigned = await Promise.all(apis.map((a) => allAssigned(a, ns.name, 3)));
    for (const [i, c] of CLUSTERS.entries()) {
      const out = await kubectlOk(c, ["get", "id", "-n", ns.name]);
      const header = out.split("\n")[0];
      assert.match(header, /NAME\s+UUID\s+STATUS/, `${c}: kubectl get id header: ${header}`);
      for (const [name, uuid] of assigned[i]) {
        assert.match(out, new RegExp(`${name}\\s+${uuid}\\s+Ok`), `${c}: row for ${name} in\n${out}`);
      }
      const objs = await apis[i].listUuids(ns.name);
      for (const o of objs) {
        assert.equal(o.status.state, "Ok");
        assert.equal(typeof o.status.message, "string");
      }
    }
    // Our own write comes back as a watch event; it must cost no second write. Give it time to show.
    await new Promise((r) => setTimeout(r, 2000));
    const status = (await hub.get("/status")).body;
    for (const c of CLUSTERS) assert.equal(status.clusters[c].state, "watching", JSON.stringify(status));
    const writesAfter = await Promise.all(apis.map((a) => a.uuidWrites()));
    for (const [i, c] of CLUSTERS.entries()) {
      assert.equal(writesAfter[i] - writesBefore[i], 3, `${c}: apiserver_request_total PATCH uuid delta`);
    }
    const code = (await hub.stop("SIGTERM")).code;
    assert.equal(code, 0, `exit code after SIGTERM\n${hub.tail()}`);
  } finally {
    await hub.kill();
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});

Deno.test("Fairness: with prod's backlog queued and every worker held in a prod write, staging's new Uuid is served within two freed workers", async () => {
  const ns = await testNamespace("fair", { contexts: ["prod", "staging"] });
  const prod = localApi("prod");
  const staging = localApi("staging");
  // The hub reaches prod through a proxy that holds each status write until the test lets it through, so the
  // order of hand-outs, not the machine's speed, decides what happens next.
  const proxy = await proxyInFrontOf("prod");
  const heldWrites: (() => void)[] = [];
  let holding = true;
  proxy.hook = async (req) => {
    if (req.method !== "PATCH" || !holding) return undefined;
    await new Promise<void>((resume) => {
      heldWrites.push(resume);
      req.signal.addEventListener("abort", () => resume(), { once: true });
    });
    return undefined;
  };
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/prod-held.yaml`, adminKubeconfigVia("prod", proxy.url, "prod-held"));
  const workers = 4;
  const backlog = 200;
  await prod.createUuids(ns.name, Array.from({ length: backlog }, (_, i) => `p-${i}`), 32);
  const hub = HubProcess.start({
    clusters: ["prod-held", "staging"],
    kubeconfigs: [new URL("../clusters/local.yaml", import.meta.url).pathname, `${dir}/prod-held.yaml`],
    args: ["--namespace", ns.name, "--concurrency", String(workers)],
  });
  try {
    await waitFor(
      () => Promise.resolve(heldWrites.length === workers),
      "every worker held in a prod write",
      60_000,
      50,
    );
    await hub.waitStatus((s) => s.clusters?.staging?.state === "watching", 60_000, "staging watching");
    await staging.createUuids(ns.name, ["s-0"]);
    // Nothing moves while every worker waits: staging's key sits in the queue behind prod's backlog.
    await hub.waitStatus((s) => s.clusters.staging.queue === 1, 60_000, "staging's key queued");
    const stagingDone = async () => (await staging.uuidsOf(ns.name)).get("s-0");
    let freed = 0;
    while (!(await stagingDone())) {
      // The queue promises a cluster's key within as many hand-outs as clusters have keys queued: two here.
      assert.ok(freed < 2, `staging still waits after ${freed} freed workers took prod keys`);
      heldWrites.shift()!();
      freed++;
      // The freed worker takes the next key: staging's (it is written, not held) or prod's (held again).
      await waitFor(
        async () => heldWrites.length === workers || await stagingDone(),
        "the freed worker's next key settled",
        60_000,
        50,
      );
    }
    const prodDone = [...(await prod.uuidsOf(ns.name)).values()].filter(Boolean).length;
    console.log(
      `figure: staging's Uuid was served after ${freed} freed workers, with ${prodDone}/${backlog} prod done`,
    );
    assert.ok(prodDone <= workers + freed, `${prodDone} prod Uuids written`);
  } finally {
    holding = false;
    heldWrites.splice(0).forEach((resume) => resume());
    await hub.kill();
    await proxy.close();
    await prod.deleteAllUuids(ns.name);
    prod.close();
    staging.close();
    await ns.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Health: an unreachable cluster keeps /readyz at 503 naming it, /healthz at 200 degraded, while the others work", async () => {
  const ns = await testNamespace("health", { contexts: ["prod"] });
  const api = localApi("prod");
  const dir = await Deno.makeTempDir();
  const ghost = `${dir}/ghost.yaml`;
  // A context whose server refuses connections: a port nobody listens on.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await Deno.writeTextFile(
    ghost,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: ghost\n  cluster:\n    server: https://127.0.0.1:${port}\n` +
      `users:\n- name: ghost\n  user:\n    token: ghost-token-never-valid\ncontexts:\n- name: ghost\n  context:\n` +
      `    cluster: ghost\n    user: ghost\ncurrent-context: ghost\n`,
  );
  const hub = HubProcess.start({
    clusters: ["prod", "ghost"],
    kubeconfigs: [new URL("../clusters/local.yaml", import.meta.url).pathname, ghost],
  });
  try {
    const status = await hub.waitStatus((s) => s.clusters?.prod?.state === "watching" && s.clusters?.ghost?.lastError);
    assert.equal(status.clusters.ghost.state, "unreachable");
    const ready = await hub.get("/readyz");
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body.notReady, ["ghost"]);
    const live = await hub.get("/healthz");
    assert.equal(live.status, 200);
    assert.equal(live.body.status, "degraded");
    await api.createUuids(ns.name, ["h-0"]);
    const uuid = await waitFor(async () => (await api.uuidsOf(ns.name)).get("h-0"), "prod UUID while ghost is down");
    assert.match(String(uuid), UUID_V4);
    const text = JSON.stringify((await hub.get("/status")).body) + (await hub.get("/metrics")).text +
      hub.logs.join("\n");
    assert.ok(!text.includes("ghost-token-never-valid"), "the token leaked into /status, /metrics or logs");
    assert.ok(!text.includes(api.ep.token), "the admin token leaked into /status, /metrics or logs");
  } finally {
    await hub.kill();
    await api.deleteAllUuids(ns.name);
    api.close();
    await ns.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Readiness: /readyz is 503 naming the cluster whose first list is held back, then 200 once it completes", async () => {
  // dev is reached through a proxy that holds its first Uuid list until released: until then dev cannot have
  // synced, whatever the machine's speed, while prod and staging finish theirs.
  const proxy = await proxyInFrontOf("dev");
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let listHeld!: () => void;
  const held = new Promise<void>((r) => listHeld = r);
  proxy.hook = async (req) => {
    if (req.method !== "GET" || !req.path.endsWith("/uuid") || req.query.get("watch")) return undefined;
    listHeld();
    await released;
    return undefined;
  };
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/dev-held.yaml`, adminKubeconfigVia("dev", proxy.url, "dev-held"));
  const hub = HubProcess.start({
    clusters: ["prod", "staging", "dev-held"],
    kubeconfigs: [new URL("../clusters/local.yaml", import.meta.url).pathname, `${dir}/dev-held.yaml`],
  });
  try {
    await held;
    const status = await hub.waitStatus(
      (s) => s.clusters?.prod?.state === "watching" && s.clusters?.staging?.state === "watching",
      60_000,
      "prod and staging watching while dev's list is held",
    );
    assert.notEqual(status.clusters["dev-held"].state, "watching", JSON.stringify(status));
    const waiting = await hub.get("/readyz");
    assert.equal(waiting.status, 503, JSON.stringify(waiting.body));
    assert.deepEqual(waiting.body.notReady, ["dev-held"]);
    assert.equal(waiting.body.ready, false);
    release();
    await hub.waitReady();
    const ready = await hub.get("/readyz");
    assert.equal(ready.status, 200);
    const after = (await hub.get("/status")).body;
    for (const c of ["prod", "staging", "dev-held"]) assert.equal(after.clusters[c].state, "watching");
    assert.ok(proxy.seen((r) => r.method === "GET" && r.path.endsWith("/uuid")).length > 0, "dev listed via the proxy");
  } finally {
    release();
    await hub.kill();
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("The seed-shaped CRD (no status subresource) is detected and served by patching the object itself", async () => {
  const ns = await testNamespace("seed", { contexts: ["dev"] });
  const api = localApi("dev");
  await installSeedCrd("dev");
  const hub = HubProcess.start({ clusters: ["dev"] });
  try {
    await hub.waitReady();
    const before = await api.uuidWrites();
    const file = await Deno.makeTempFile({ suffix: ".yaml" });
    await Deno.writeTextFile(file, [1, 2].map((i) => uuidManifest(ns.name, `seed-${i}`)).join("---\n"));
    await kubectlOk("dev", ["apply", "-f", file]);
    const m = await allAssigned(api, ns.name, 2);
    const out = await kubectlOk("dev", ["get", "uuid", "-n", ns.name]);
    for (const [name, uuid] of m) assert.match(out, new RegExp(`${name}\\s+${uuid}\\s+Ok`));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await api.uuidWrites() - before, 2, "one write per object without a status subresource");
  } finally {
    await hub.kill();
    await api.deleteAllUuids(ns.name);
    api.close();
    await installProductionCrd("dev");
    await ns.cleanup();
  }
});
