// Fault: 410 Gone. etcd is compacted while the hub is cut off, so its resourceVersion (or its list's continue token)
// no longer exists. Both forms come from the real apiserver: an ERROR event with code 410 inside a watch stream, and an
// HTTP 410 answer to a continued (paginated) list.
//
// The faulted apiserver runs with --watch-cache=false, so watches and lists go to etcd and a compaction expires them
// at once (with the watch cache, a recent resourceVersion stays servable from memory for a while). An intercepting
// proxy lets the test act at the exact moment: it holds the hub's reconnect while the test deletes objects and
// compacts, and compacts again right before the hub fetches the second page of its relist.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { etcdCompact } from "../../dev/support/fault_cluster.ts";
import { faultScenario, logLines, recordFigure, secondsSince, waitStatus } from "../support/fault_harness.ts";
import { InterceptProxy } from "../support/intercept_proxy.ts";

/** A gate the intercept hook waits on while closed; it counts the requests it held. */
class Gate {
  #open: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  /** Requests that arrived while the gate was closed (a measured figure). */
  held = 0;
  close(): void {
    this.#open = new Promise((r) => (this.#release = r));
  }
  open(): void {
    this.#release?.();
    this.#release = undefined;
    this.#open = Promise.resolve();
  }
  wait(): Promise<void> {
    if (this.#release) this.held++;
    return this.#open;
  }
}

/** The scenario both forms share: an apiserver without watch cache, behind an intercepting proxy. */
async function goneScenario(label: string) {
  const s = await faultScenario(label, { apiserver: { extraArgs: ["--watch-cache=false"] } });
  const proxy = s.cleanup.add(await InterceptProxy.inFrontOf(s.f), (p) => p.close());
  const observer = s.observe();
  const kubeconfig = await s.kubeconfig([s.f.context(label, { server: proxy.url })]);
  return Object.assign(s, { proxy, observer, kubeconfig, gate: new Gate() });
}

const isWatch = (q: string) => /[?&]watch=(true|1)/.test(q);
const isList = (r: { method: string; path: string; query: string }) =>
  r.method === "GET" && r.path.endsWith("/uuid") && !isWatch(r.query);

Deno.test("A 410 ERROR event in the watch stream after etcd compaction makes the hub relist, and an object deleted during the gap leaves its store", async () => {
  await using s = await goneScenario("gone-event");
  const { proxy, api, ns, observer, kubeconfig, gate } = s;
  proxy.hook = async () => {
    await gate.wait();
    return undefined;
  };
  const hub = s.startHub(["prod", "gone-event"], { extraKubeconfigs: [kubeconfig], namespaces: [ns] });
  await hub.waitReady(60_000);
  await api.createUuids(ns, names("a", 6));
  const before = await waitAllAssigned(api, ns, 6, 30_000);
  const s0 = await waitStatus(hub, "6 objects in the store", (x) => x.clusters["gone-event"].objects === 6);

  // Cut the hub off: its watch stream ends and its reconnect waits at the proxy.
  gate.close();
  const gapAt = performance.now();
  assert.ok(proxy.cutStreams() >= 1, "the hub had a watch open");
  await api.deleteUuid(ns, "a-0");
  await api.deleteUuid(ns, "a-1");
  await api.createUuids(ns, ["b-0"]);
  await etcdCompact();
  const heldAt = proxy.records.length;
  gate.open();

  await waitStatus(hub, "5 objects after the relist", (x) => x.clusters["gone-event"].objects === 5, 30_000);
  const after = await waitAllAssigned(api, ns, 5, 30_000);
  const recoveredIn = secondsSince(gapAt);
  const s1 = (await hub.get("/status")).body.clusters["gone-event"];

  // The form, seen on the wire: the resumed watch was accepted (HTTP 200), the apiserver sent an ERROR event with
  // code 410 inside that stream, and then the hub listed again.
  const later = proxy.records.slice(heldAt - 1);
  const resumed = later.find((r) => isWatch(r.query));
  assert.ok(resumed, "the hub resumed its watch");
  assert.equal(resumed.status, 200, "the 410 came inside the stream, not as the HTTP status");
  assert.deepEqual(
    resumed.errorEvents.map((e) => e.code),
    [410],
    `the resumed stream carried one ERROR event with code 410: ${JSON.stringify(resumed.errorEvents)}`,
  );
  assert.ok(later.some((r) => isList(r) && r.at > resumed.at), "then it relisted");
  assert.ok(s1.relists > s0.clusters["gone-event"].relists, JSON.stringify(s1));
  assert.ok(logLines(hub, (l) => l.msg.includes("relisting") && l.cluster === "gone-event").length >= 1);
  // Nothing lost or changed; the deleted objects are gone from the store (5 = 6 - 2 + 1).
  for (const [name, uuid] of after) if (before.has(name)) assert.equal(uuid, before.get(name));
  assert.ok(UUID_V4.test(after.get("b-0")!));
  observer.assertStable([...before.keys(), ...after.keys()]);
  assert.deepEqual(observer.partial, []);
  await recordFigure({
    fault: "410 Gone, ERROR event in the watch stream",
    recoverSeconds: recoveredIn,
    lost: [...before.keys(), "b-0"].filter((n) => !["a-0", "a-1"].includes(n) && !after.has(n)).length,
    changed: observer.changed().length,
    relists: s1.relists - s0.clusters["gone-event"].relists,
    connectionsDuringOutage: `${gate.held} requests held at the proxy during the gap`,
  });
});

Deno.test("An HTTP 410 on a continued list after etcd compaction makes the hub start its list over, and objects deleted during the gap leave its store", async () => {
  await using s = await goneScenario("gone-http");
  const { proxy, api, ns, observer, kubeconfig, gate } = s;
  // 520 objects: the hub lists them in two pages of 500.
  await api.createUuids(ns, names("p", 520), 24);
  let compactBeforeContinue = false;
  let compactions = 0;
  proxy.hook = async (req) => {
    await gate.wait();
    if (compactBeforeContinue && req.method === "GET" && req.query.has("continue")) {
      compactBeforeContinue = false;
      compactions++;
      await etcdCompact();
    }
    return undefined;
  };
  const hub = s.startHub(["prod", "gone-http"], { extraKubeconfigs: [kubeconfig], namespaces: [ns] });
  await hub.waitReady(60_000);
  const before = await waitAllAssigned(api, ns, 520, 60_000);
  const s0 = (await waitStatus(hub, "520 objects", (x) => x.clusters["gone-http"].objects === 520)).clusters[
    "gone-http"
  ];

  // The gap: the hub is cut off while two objects are deleted and etcd is compacted; on its way back, its relist
  // is compacted away between page 1 and page 2.
  gate.close();
  const gapAt = performance.now();
  assert.ok(proxy.cutStreams() >= 1);
  await api.deleteUuid(ns, "p-0");
  await api.deleteUuid(ns, "p-519");
  await etcdCompact();
  compactBeforeContinue = true;
  const mark = proxy.records.length;
  gate.open();

  await waitStatus(hub, "518 objects after the relists", (x) => x.clusters["gone-http"].objects === 518, 30_000);
  const recoveredIn = secondsSince(gapAt);
  const s1 = (await hub.get("/status")).body.clusters["gone-http"];
  assert.equal(compactions, 1, "the hub fetched a second page during its relist");
  const later = proxy.records.slice(mark);
  const expired = later.find((r) => r.method === "GET" && r.query.includes("continue=") && r.status === 410);
  assert.ok(expired, `a continued list answered HTTP 410: ${JSON.stringify(later.map((r) => [r.query, r.status]))}`);
  assert.equal(expired.synthetic, false, "the 410 came from the real apiserver");
  assert.ok(
    later.some((r) => isList(r) && !r.query.includes("continue=") && r.at > expired.at),
    "the hub started its list over from the first page",
  );
  assert.ok(s1.relists >= s0.relists + 1, JSON.stringify(s1));
  assert.equal(s1.state, "watching");
  const after = await api.uuidsOf(ns);
  assert.equal(after.size, 518);
  for (const [name, uuid] of after) assert.equal(uuid, before.get(name), `${name} changed`);
  observer.assertStable(before.keys());
  await recordFigure({
    fault: "410 Gone, HTTP status on a continued list",
    recoverSeconds: recoveredIn,
    lost: [...before.keys()].filter((n) => n !== "p-0" && n !== "p-519" && !after.get(n)).length,
    changed: observer.changed().length,
    relists: s1.relists - s0.relists,
    connectionsDuringOutage: `${gate.held} requests held at the proxy during the gap`,
  });
});
