// Fault: 410 Gone under a Kopf-style create handler. etcd is compacted while the hub is cut off, so it must relist;
// the done-marks on the objects keep every finished create handler from running again.

import assert from "node:assert/strict";
import { names, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { etcdCompact } from "../../dev/support/fault_cluster.ts";
import { faultScenario, waitStatus } from "../support/fault_harness.ts";
import { InterceptProxy } from "../support/intercept_proxy.ts";

const UUID_FILE = "examples/uuid_kopf_style.ts";

Deno.test("After a forced 410 relist, a Kopf-style create handler that finished never runs again; only new objects are handled", async () => {
  await using s = await faultScenario("kopf-gone", { apiserver: { extraArgs: ["--watch-cache=false"] } });
  const proxy = s.cleanup.add(await InterceptProxy.inFrontOf(s.f), (p) => p.close());
  const observer = s.observe();
  const kubeconfig = await s.kubeconfig([s.f.context("kopf-gone", { server: proxy.url })]);
  let release: (() => void) | undefined;
  let gate = Promise.resolve();
  proxy.hook = async () => {
    await gate;
    return undefined;
  };
  const hub = s.startHub(["kopf-gone"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [s.ns],
    args: ["--operators", "none", "--debug", UUID_FILE],
  });
  await hub.waitReady(60_000);
  await s.api.createUuids(s.ns, names("a", 6));
  const before = await waitAllAssigned(s.api, s.ns, 6, 60_000);
  const s0 = await waitStatus(hub, "6 objects in the store", (x) => x.clusters["kopf-gone"].objects === 6);

  // Cut the hub off; while its reconnect waits at the proxy, add objects and compact etcd past its resourceVersion.
  gate = new Promise((r) => (release = r));
  assert.ok(proxy.cutStreams() >= 1, "the hub had a watch open");
  await s.api.createUuids(s.ns, names("b", 4));
  await etcdCompact();
  release!();

  const after = await waitAllAssigned(s.api, s.ns, 10, 60_000);
  const s1 = await waitStatus(hub, "10 objects", (x) => x.clusters["kopf-gone"].objects === 10, 60_000);
  const gone = proxy.records.some((r) => r.status === 410 || r.errorEvents.some((e) => e.code === 410));
  assert.ok(gone, "the apiserver answered the resumed watch with 410 (seen on the wire)");
  assert.ok(s1.clusters["kopf-gone"].relists > s0.clusters["kopf-gone"].relists, "the hub relisted");
  for (const [name, uuid] of before) assert.equal(after.get(name), uuid, name);
  const invoked = hub.logs.filter((l) => l.includes('"msg":"handler finished"') && l.includes('"phase":"create"'))
    .map((l) => JSON.parse(l).name as string);
  const counts = Object.fromEntries([...after.keys()].map((n) => [n, invoked.filter((x) => x === n).length]));
  console.log(`create-handler invocations per object across the 410 relist: ${JSON.stringify(counts)}`);
  assert.deepEqual(
    Object.values(counts),
    Array(10).fill(1),
    "each create handler ran once, none again after the relist",
  );
  observer.assertStable(after.keys());
});
