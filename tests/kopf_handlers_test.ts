// End-to-end: Kopf-style handlers (defineHandlers) and operator files on the command line, on the real local clusters.
// deno-lint-ignore-file no-explicit-any -- JSON from the hub and kubectl is checked by the test itself.

import assert from "node:assert/strict";
import { localApi, names, UUID_V4, waitAllAssigned, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess, runHubCli } from "../dev/support/hub_process.ts";
import { kubectl, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const UUID_FILE = "examples/uuid_kopf_style.ts";
const LIFECYCLE_FILE = "examples/kopf_lifecycle.ts";
const MOD_URL = new URL("../mod.ts", import.meta.url).href;

/** Create-handler invocations of `operator` a hub logged (debug line "handler finished", before its write). */
function createInvocations(hub: HubProcess, operator: string): number {
  return hub.logs.filter((l) => l.includes('"msg":"handler finished"') && l.includes(`"operator":"${operator}"`))
    .filter((l) => l.includes('"phase":"create"')).length;
}

Deno.test("An operator file on the command line runs beside the built-in operators, and alone with --operators none, at one status write per Uuid", async () => {
  // Beside the built-ins: `deno task run --clusters prod,staging,dev examples/uuid_kopf_style.ts`.
  const beside = HubProcess.start({ clusters: CLUSTERS, args: [UUID_FILE] });
  try {
    await beside.waitReady();
    const status = (await beside.get("/status")).body;
    for (const c of CLUSTERS) {
      assert.deepEqual(Object.keys(status.clusters[c].operators).sort(), ["mirror", "uuid", "uuid-kopf"], c);
    }
  } finally {
    await beside.stop("SIGTERM");
  }

  const perCluster = 20;
  const ns = await testNamespace("kopf-writes");
  const apis = CLUSTERS.map((c) => localApi(c));
  const hub = HubProcess.start({ clusters: CLUSTERS, args: ["--operators", "none", UUID_FILE] });
  try {
    await hub.waitReady();
    assert.deepEqual(Object.keys((await hub.get("/status")).body.clusters.prod.operators), ["uuid-kopf"]);
    const before = await Promise.all(apis.map((a) => a.uuidWrites()));
    await Promise.all(apis.map((a) => a.createUuids(ns.name, names("u", perCluster))));
    const assigned = await Promise.all(apis.map((a) => waitAllAssigned(a, ns.name, perCluster, 120_000)));
    for (const m of assigned) for (const u of m.values()) assert.match(u, UUID_V4);
    // The watch event of each write must not cause a second one: give it time to show.
    await new Promise((r) => setTimeout(r, 2000));
    const after = await Promise.all(apis.map((a) => a.uuidWrites()));
    const writes = after.reduce((s, n, i) => s + n - before[i], 0);
    const objects = perCluster * CLUSTERS.length;
    console.log(`writes per object (apiserver_request_total PATCH uuid): ${(writes / objects).toFixed(2)}`);
    assert.equal(writes, objects, "one PATCH per object: the handler's status and its done-mark in one request");
    for (const o of await apis[0].listUuids(ns.name)) {
      assert.deepEqual(o.status.handlers, { create: { assignUuid: { done: true } } }, o.metadata.name);
      assert.equal(o.status.state, "Ok");
      assert.equal(o.metadata.finalizers, undefined, "no delete handler, no finalizer");
    }
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
  } finally {
    await hub.kill();
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});

const WRITES_FILE = "tests/fixtures/kopf_writes_operator.ts";

Deno.test("Create, field and delete handlers cost the fewest writes: 2 per created object, 1 per field change, 1 per delete, none rejected", async () => {
  const perCluster = 10;
  const changes = 5; // field changes per cluster, as in issue 28's scenario
  const ns = await testNamespace("kopf-fewest");
  const apis = CLUSTERS.map((c) => localApi(c));
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--operators", "none", "--namespace", ns.name, WRITES_FILE],
  });
  const counts = async () => await Promise.all(apis.map((a) => a.uuidWritesByCode()));
  const sum = (before: Record<string, number>[], after: Record<string, number>[], ok: boolean) =>
    after.reduce(
      (n, codes, i) =>
        n + Object.entries(codes).reduce((m, [code, v]) =>
          code.startsWith("2") === ok ? m + v - (before[i][code] ?? 0) : m, 0),
      0,
    );
  // A write caused by the watch event of the hub's own write would come within this time.
  const settle = () => new Promise((r) => setTimeout(r, 1500));
  const all = async (check: (o: any) => boolean) =>
    (await Promise.all(apis.map((a) => a.listUuids(ns.name)))).every((items) =>
      items.length === perCluster && items.every(check)
    );
  try {
    await hub.waitReady();
    const t0 = await counts();
    await Promise.all(apis.map((a) => a.createUuids(ns.name, names("w", perCluster))));
    await waitFor(() => all((o) => o.status?.state === "Created"), "every object created", 60_000);
    await settle();
    const t1 = await counts();
    // The test's own PATCHes (one per change, 200) are counted by the apiservers too: subtracted below.
    for (let i = 0; i < changes; i++) {
      await Promise.all(
        apis.map((a) =>
          a.request("PATCH", `/apis/demo.operator/v1/namespaces/${ns.name}/uuid/w-${i}`, { spec: { quota: 7 } })
        ),
      );
    }
    await waitFor(
      () => all((o) => Number(o.metadata.name.split("-")[1]) >= changes || o.status?.message === "quota 7"),
      "every field change handled",
    );
    await settle();
    const t2 = await counts();
    await Promise.all(apis.map((a) => a.deleteAllUuids(ns.name)));
    await waitFor(
      async () => (await Promise.all(apis.map((a) => a.listUuids(ns.name)))).every((items) => items.length === 0),
      "every object gone",
    );
    await settle();
    const t3 = await counts();
    const objects = perCluster * CLUSTERS.length;
    const created = sum(t0, t1, true), changed = sum(t1, t2, true) - changes * CLUSTERS.length;
    const deleted = sum(t2, t3, true);
    const rejected = sum(t0, t3, false);
    console.log(
      `writes (apiserver_request_total PATCH uuid, ${objects} objects, ${changes * CLUSTERS.length} field changes): ` +
        `create ${(created / objects).toFixed(2)}/object, field change ${
          (changed / (changes * CLUSTERS.length)).toFixed(2)
        }, ` +
        `delete ${(deleted / objects).toFixed(2)}/object, rejected ${rejected}; per object over creates and changes ` +
        `${((created + changed) / objects).toFixed(2)}, with deletes ${
          ((created + changed + deleted) / objects).toFixed(2)
        }`,
    );
    // The hub's own count of its PATCHes (rest_client_requests_total), to tell its writes from anyone else's.
    const hubPatches: Record<string, number> = {};
    for (const line of (await hub.get("/metrics")).text.split("\n")) {
      const m = /^rest_client_requests_total\{.*code="(\d+)".*method="PATCH".*\} (\d+)/.exec(line);
      if (m) hubPatches[m[1]] = (hubPatches[m[1]] ?? 0) + Number(m[2]);
    }
    console.log(`the hub's own PATCHes by code: ${JSON.stringify(hubPatches)}`);
    assert.equal(rejected, 0, "no rejected (409) write");
    assert.equal(created, 2 * objects, "2 writes per created object: the finalizer, then status with the done-mark");
    assert.equal(changed, changes * CLUSTERS.length, "1 write per field change");
    assert.equal(deleted, objects, "1 write per delete: the finalizer's removal");
  } finally {
    await hub.kill();
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});

Deno.test("A create handler's effect lands exactly once per object across a hub SIGKILL mid-burst and two hubs at once", async () => {
  const perCluster = 60;
  const ns = await testNamespace("kopf-once");
  const apis = CLUSTERS.map((c) => localApi(c));
  const observers = apis.map((a) => a.observe(ns.name));
  const args = ["--operators", "none", "--debug", UUID_FILE];
  const hubs = [HubProcess.start({ clusters: CLUSTERS, args }), HubProcess.start({ clusters: CLUSTERS, args })];
  try {
    await Promise.all(hubs.map((h) => h.waitReady()));
    const okBefore = await Promise.all(apis.map((a) => a.uuidWrites(true)));
    const allBefore = await Promise.all(apis.map((a) => a.uuidWrites()));
    const created = Promise.all(apis.map((a) => a.createUuids(ns.name, names("u", perCluster), 4)));
    // Mid-burst: some objects handled, most not yet.
    await waitFor(async () => {
      const m = await apis[0].uuidsOf(ns.name);
      return [...m.values()].filter((u) => typeof u === "string").length >= 5;
    }, "the first handled Uuids in prod");
    const killed = await hubs[0].kill();
    assert.equal(killed.signal, "SIGKILL");
    hubs.push(HubProcess.start({ clusters: CLUSTERS, args }));
    await created;
    await Promise.all(apis.map((a) => waitAllAssigned(a, ns.name, perCluster, 180_000)));
    await new Promise((r) => setTimeout(r, 2000));
    for (const [i, o] of observers.entries()) o.assertStable(names("u", perCluster), CLUSTERS[i]);
    const okAfter = await Promise.all(apis.map((a) => a.uuidWrites(true)));
    const allAfter = await Promise.all(apis.map((a) => a.uuidWrites()));
    const objects = perCluster * CLUSTERS.length;
    const okWrites = okAfter.reduce((s, n, i) => s + n - okBefore[i], 0);
    const allWrites = allAfter.reduce((s, n, i) => s + n - allBefore[i], 0);
    const invocations = hubs.reduce((s, h) => s + createInvocations(h, "uuid-kopf"), 0);
    console.log(
      `objects ${objects}; successful writes ${okWrites}; PATCH requests incl. 409 conflicts ${allWrites}; ` +
        `create-handler invocations ${invocations} (${invocations - objects} beyond one per object: racing hubs ` +
        "and the killed hub's in-flight handlers)",
    );
    // The exactly-once proof is the independent watch above (one UUID value ever per object). The apiserver's own
    // count of 2xx writes can only confirm no object took a second successful write: a PATCH in flight when its
    // client was SIGKILLed can land in etcd without being counted as 2xx, so it may come out below `objects`.
    assert.ok(okWrites <= objects, `no object took two successful status writes: ${okWrites} for ${objects}`);
    for (const [i, a] of apis.entries()) {
      for (const o of await a.listUuids(ns.name)) {
        assert.deepEqual(
          o.status.handlers,
          { create: { assignUuid: { done: true } } },
          `${CLUSTERS[i]} ${o.metadata.name}`,
        );
      }
    }
    assert.ok(invocations >= objects, `every object's handler ran at least once: ${invocations}`);
  } finally {
    await Promise.all(hubs.map((h) => h.kill()));
    await Promise.all(observers.map((o) => o.stop()));
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});

Deno.test("Kopf-style lifecycle: TemporaryError retries, an update handler sees the field diff, a field handler only its field, a restart resumes, and a delete handler runs before its finalizer goes", async () => {
  const ns = await testNamespace("kopf-life", { contexts: ["prod"] });
  const api = localApi("prod");
  let hub = HubProcess.start({ clusters: ["prod"], args: ["--operators", "none", "--debug", LIFECYCLE_FILE] });
  const get = async () => (await api.getUuid(ns.name, "a")) as any;
  const patchSpec = (spec: Record<string, unknown>) =>
    kubectlOk("prod", ["patch", "uuid", "a", "-n", ns.name, "--type", "merge", "-p", JSON.stringify({ spec })]);
  try {
    await hub.waitReady();
    const manifest = `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: a\n  namespace: ${ns.name}\n` +
      "spec:\n  hold: true\n  replicas: 1\n";
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: manifest });
    await waitFor(() => hub.logs.some((l) => l.includes("handler asked for a retry")), "a TemporaryError retry");
    const held = await get();
    assert.deepEqual(held.metadata.finalizers, ["operator-hub.dev/handlers"], "a delete handler adds the finalizer");
    assert.equal(held.status?.state, undefined, "the create handler has not succeeded yet");

    await patchSpec({ hold: false });
    const created = await waitFor(async () => {
      const o = await get();
      return o.status?.state === "Created" ? o : undefined;
    }, "the create handler succeeded after its TemporaryError");
    assert.equal(created.status.message, "created", "releasing the hold is part of creation, not an update");

    await patchSpec({ replicas: 3, x: 1 });
    const updated = await waitFor(async () => {
      const o = await get();
      return o.status?.message?.startsWith("updated") ? o : undefined;
    }, "the update handlers ran");
    assert.equal(updated.status.message, "updated: change spec.replicas, add spec.x");
    assert.equal(updated.status.state, "Replicas 1->3", "the field handler saw old and new of spec.replicas");

    await patchSpec({ x: 2 });
    const again = await waitFor(async () => {
      const o = await get();
      return o.status?.message === "updated: change spec.x" ? o : undefined;
    }, "the update handler saw spec.x change");
    assert.equal(again.status.state, "Replicas 1->3", "the spec.replicas field handler did not run");

    // A new hub resumes the object (Kopf's on.resume); the first never did, as it saw the object created.
    assert.ok(!hub.logs.some((l) => l.includes('"phase":"resume"')), "no resume for an object created while running");
    await hub.stop("SIGTERM");
    hub = HubProcess.start({ clusters: ["prod"], args: ["--operators", "none", "--debug", LIFECYCLE_FILE] });
    await hub.waitReady();
    await waitFor(async () => (await get()).status?.message === "resumed", "the resume handler ran after a restart");
    assert.equal((await get()).status.state, "Replicas 1->3", "a restart re-runs no create or update handler");

    await kubectlOk("prod", ["delete", "uuid", "a", "-n", ns.name, "--timeout=60s"]);
    const r = await kubectl("prod", ["get", "uuid", "a", "-n", ns.name]);
    assert.notEqual(r.code, 0, "the object is gone once its finalizer was removed");
    const events = await api.eventsFor(ns.name, "a");
    assert.ok(events.some((e) => e.reason === "CleanedUp"), `the delete handler ran: ${JSON.stringify(events)}`);
  } finally {
    await hub.kill();
    api.close();
    await ns.cleanup();
  }
});

/** When a hub logged the timer firing for `name` (ms since the epoch, from the log's time field). */
function timerFirings(hub: HubProcess, name: string): number[] {
  return hub.logs.filter((l) => l.includes('"phase":"timer"') && l.includes(`"name":"${name}"`))
    .map((l) => Date.parse(JSON.parse(l).time));
}

Deno.test("A timer fires per object at its interval and stops when the object is deleted", async () => {
  const ns = await testNamespace("kopf-timer", { contexts: ["prod"] });
  const api = localApi("prod");
  const hub = HubProcess.start({ clusters: ["prod"], args: ["--operators", "none", "--debug", LIFECYCLE_FILE] });
  try {
    await hub.waitReady();
    await api.createUuid(ns.name, "t");
    await waitFor(() => timerFirings(hub, "t").length >= 6, "six timer firings", 60_000);
    await kubectlOk("prod", ["delete", "uuid", "t", "-n", ns.name, "--timeout=60s"]);
    const atDelete = timerFirings(hub, "t");
    // Three intervals: a timer still running would fire again.
    await new Promise((r) => setTimeout(r, 3000));
    const after = timerFirings(hub, "t");
    assert.ok(after.length <= atDelete.length + 1, `fired after deletion: ${after.length - atDelete.length} times`);
    const gaps = atDelete.slice(1).map((t, i) => t - atDelete[i]).sort((a, b) => a - b);
    console.log(
      `timer every 1000 ms: ${gaps.length} intervals, median ${gaps[Math.floor(gaps.length / 2)]} ms, ` +
        `min ${gaps[0]} ms, max ${gaps[gaps.length - 1]} ms; firings after deletion: ${after.length - atDelete.length}`,
    );
    assert.ok(gaps[0] >= 800, `no interval is shorter than the timer's 1000 ms - 20 %: ${gaps.join(", ")}`);
  } finally {
    await hub.kill();
    api.close();
    await ns.cleanup();
  }
});

Deno.test("An operator file that does not load, exports no operator, or holds an invalid definition exits 2 with one line naming it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "operator-files-" });
  try {
    const cases: [string, string, RegExp][] = [
      ["broken.ts", 'throw new Error("boom at import");\n', /broken\.ts does not load: boom at import/],
      ["nothing.ts", "export const answer = 42;\n", /nothing\.ts exports no operator \(exports: answer\)/],
      [
        "invalid.ts",
        `import { defineHandlers } from "${MOD_URL}";\n` +
        `export const op = defineHandlers({ name: "Not Valid", resource: { group: "", version: "v1", ` +
        `kind: "ConfigMap", plural: "configmaps" }, create: () => {} });\n`,
        /invalid\.ts: invalid operator definition: invalid operator name "Not Valid"/,
      ],
    ];
    for (const [file, text, expected] of cases) {
      await Deno.writeTextFile(`${dir}/${file}`, text);
      const out = await runHubCli(["--clusters", "prod", `${dir}/${file}`]);
      assert.equal(out.code, 2, `${file}: ${out.stderr}`);
      const lines = out.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${file}: one line: ${out.stderr}`);
      assert.match(lines[0], expected);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
