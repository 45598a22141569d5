// Bad objects at runtime: garbage in status (a number for uuid, an invalid UUID string, an unknown state), huge
// annotations, names at the maximum length, objects in a namespace being deleted. The rule for status.uuid (see
// src/operators/uuid/status_rule.ts): a value that is not a UUID is marked Error and left untouched.

import assert from "node:assert/strict";
import { UUID_V4, waitFor } from "../../dev/support/cluster_api.ts";
import { etcdGet, etcdPut } from "../../dev/support/fault_cluster.ts";
import { faultScenario, logLines, waitStatus } from "../support/fault_harness.ts";

const TERMINATING = "bad-terminating";
const LONG = "x".repeat(253);

Deno.test("Bad objects are handled one by one and never stop the cluster or the others: garbage status is marked Error and left untouched, an unknown state is corrected, huge annotations, 253-character names and a terminating namespace are served", async () => {
  await using s = await faultScenario("badobj", { local: ["prod"] });
  const { f, api, ns: NS, local: { prod } } = s;
  await api.createNamespace(TERMINATING);
  const validUuid = crypto.randomUUID();

  // Everything exists before the hub starts, so its first list sees it all.
  await api.createUuid(NS, "number");
  // A number cannot pass the CRD schema (status.uuid is a string): write it behind the apiserver's back, as an
  // operator from before the schema existed would have left it.
  const key = `${f.etcdPrefix}/demo.operator/uuid/${NS}/number`;
  const stored = JSON.parse((await etcdGet(key))!);
  stored.status = { uuid: 12345, state: "Ok", message: "written by an old operator" };
  await etcdPut(key, JSON.stringify(stored));
  await api.createUuid(NS, "garbage");
  await api.patchStatus(NS, "garbage", { uuid: "not-a-uuid" });
  await api.createUuid(NS, "weird-state");
  await api.patchStatus(NS, "weird-state", { uuid: validUuid, state: "Weird", message: "?" });
  await api.createUuid(NS, "huge", { annotations: { "example.com/blob": "y".repeat(200 * 1024) } });
  await api.createUuid(NS, LONG);
  await api.createUuid(NS, `${LONG.slice(0, 240)}-garbage`.slice(0, 253));
  await api.patchStatus(NS, `${LONG.slice(0, 240)}-garbage`.slice(0, 253), { uuid: "also-not-a-uuid" });
  await api.createUuid(TERMINATING, "t-0");
  await api.createUuid(TERMINATING, "t-garbage");
  await api.patchStatus(TERMINATING, "t-garbage", { uuid: "nope" });
  // A finalizer keeps the namespace Terminating (the local clusters have no namespace controller anyway).
  await api.request("DELETE", `/api/v1/namespaces/${TERMINATING}`);
  assert.equal((await api.request("GET", `/api/v1/namespaces/${TERMINATING}`)).status.phase, "Terminating");
  await api.createUuid(NS, "fine");

  const kubeconfig = await s.kubeconfig([f.context("badobj")]);
  const hub = s.startHub(["prod", "badobj"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [NS, TERMINATING],
    label: "bad-objects",
  });
  await hub.waitReady(60_000);
  await prod.createUuids(NS, ["p-0", "p-1", "p-2"]);

  const get = async (ns: string, name: string) => (await api.getUuid(ns, name)).status ?? {};
  await waitFor(
    async () => {
      const s = await Promise.all([
        get(NS, "number"),
        get(NS, "garbage"),
        get(NS, "weird-state"),
        get(NS, "huge"),
        get(NS, LONG),
        get(NS, "fine"),
        get(TERMINATING, "t-0"),
        get(TERMINATING, "t-garbage"),
      ]);
      return s[0].state === "Error" && s[1].state === "Error" && s[2].state === "Ok" && s[3].uuid && s[4].uuid &&
        s[5].uuid && s[6].uuid && s[7].state === "Error";
    },
    "every bad object handled",
    30_000,
    250,
  );

  // Garbage is marked Error, with a message naming it, and left untouched.
  const number = await get(NS, "number");
  assert.equal(number.uuid, 12345);
  assert.match(number.message, /not a valid UUID \(found number 12345\)/);
  const garbage = await get(NS, "garbage");
  assert.equal(garbage.uuid, "not-a-uuid");
  assert.match(garbage.message, /not-a-uuid/);
  const events = await api.eventsFor(NS, "garbage");
  assert.ok(events.some((e) => e.type === "Warning" && e.reason === "InvalidUuid"), JSON.stringify(events));
  // An unknown state with a valid UUID: corrected to Ok, same UUID.
  const weird = await get(NS, "weird-state");
  assert.deepEqual([weird.uuid, weird.state], [validUuid, "Ok"]);
  // Huge annotations, maximum-length names, a terminating namespace: served.
  for (const [ns, name] of [[NS, "huge"], [NS, LONG], [NS, "fine"], [TERMINATING, "t-0"]]) {
    const s = await get(ns, name);
    assert.ok(UUID_V4.test(s.uuid) && s.state === "Ok", `${ns}/${name.slice(0, 20)}: ${JSON.stringify(s)}`);
  }
  assert.equal((await get(NS, `${LONG.slice(0, 240)}-garbage`.slice(0, 253))).state, "Error");
  assert.equal((await get(TERMINATING, "t-garbage")).uuid, "nope");

  // The cluster and the others kept going, and nothing loops.
  await waitFor(async () => [...(await prod.uuidsOf(NS)).values()].every(Boolean), "prod served", 15_000);
  const st = await waitStatus(hub, "badobj idle", (x) => x.clusters.badobj.queue === 0 && x.controller.inFlight === 0);
  assert.equal(st.clusters.badobj.state, "watching");
  assert.equal(st.clusters.badobj.objects, 9);
  assert.notEqual(st.status, "failing");
  // The queue's adds for badobj, from /metrics: the series must be there (and count the 9 objects at least), so
  // that "unchanged" compares two numbers, never two missing values.
  const addsOf = async () => {
    const m = (await hub.get("/metrics")).text.match(/\nworkqueue_adds_total\{[^}]*cluster="badobj"[^}]*\} (\d+)/);
    assert.ok(m, "/metrics has workqueue_adds_total for cluster badobj");
    return Number(m[1]);
  };
  const addsBefore = await addsOf();
  assert.ok(addsBefore >= 9, `workqueue_adds_total for badobj counts its 9 objects: ${addsBefore}`);
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(await addsOf(), addsBefore, "no reconcile loop on bad objects once they are marked");
  const failures = logLines(hub, (l) => l.cluster === "badobj" && l.msg.includes("reconcile failed"));
  assert.ok(failures.length <= 5, `reconcile failures: ${failures.map((l) => l.error).join(" | ")}`);
});
