// Tests of the Lease client against the real local apiserver (context prod), in a namespace of the test's own.
import assert from "node:assert/strict";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { ApiError } from "../../kube/mod.ts";
import { LeaseClient, microTime } from "./leases.ts";

/** Runs `fn` with a Lease client in a fresh namespace of prod; the namespace is deleted afterwards. */
function inNamespace(fn: (leases: LeaseClient) => Promise<void>): Promise<void> {
  return inLocalNamespace("prod", "leases", (client, ns) => fn(new LeaseClient(client, ns)));
}

const spec = (holder: string) => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: microTime(Date.now()),
  renewTime: microTime(Date.now()),
  leaseTransitions: 0,
});

Deno.test("LeaseClient creates, reads and updates a Lease; get answers undefined for one that does not exist", () =>
  inNamespace(async (leases) => {
    assert.equal(await leases.get("hub"), undefined);
    const created = await leases.create("hub", spec("replica-a"), { labels: { app: "hub" } });
    assert.equal(created.metadata.namespace, leases.namespace);
    assert.equal(created.metadata.labels?.app, "hub");
    const read = await leases.get("hub");
    assert.equal(read?.spec?.holderIdentity, "replica-a");
    assert.equal(read?.spec?.acquireTime, created.spec?.acquireTime, "MicroTime is stored as sent");
    const updated = await leases.update(read!, { ...read!.spec, holderIdentity: "replica-b" }, undefined, {
      annotations: { note: "handed over" },
    });
    assert.equal(updated.spec?.holderIdentity, "replica-b");
    assert.equal(updated.metadata.annotations?.note, "handed over");
    assert.notEqual(updated.metadata.resourceVersion, read!.metadata.resourceVersion);
  }));

Deno.test("LeaseClient.create fails with 409 when a Lease of that name exists", () =>
  inNamespace(async (leases) => {
    await leases.create("hub", spec("replica-a"));
    await assert.rejects(leases.create("hub", spec("replica-b")), (err: ApiError) => err.status === 409);
    assert.equal((await leases.get("hub"))?.spec?.holderIdentity, "replica-a");
  }));

Deno.test("LeaseClient.update of a Lease read before another writer's update fails with 409: only one writer wins", () =>
  inNamespace(async (leases) => {
    await leases.create("hub", spec("nobody"));
    const seenByA = (await leases.get("hub"))!;
    const seenByB = (await leases.get("hub"))!;
    await leases.update(seenByA, { ...seenByA.spec, holderIdentity: "replica-a" });
    await assert.rejects(
      leases.update(seenByB, { ...seenByB.spec, holderIdentity: "replica-b" }),
      (err: ApiError) => err.status === 409,
    );
    assert.equal((await leases.get("hub"))?.spec?.holderIdentity, "replica-a");
  }));

Deno.test("LeaseClient.delete honours a resourceVersion precondition, and a Lease already gone is not an error", () =>
  inNamespace(async (leases) => {
    const old = await leases.create("hub", spec("replica-a"));
    const current = await leases.update(old, { ...old.spec, holderIdentity: "replica-b" });
    await assert.rejects(leases.delete("hub", old.metadata.resourceVersion), (err: ApiError) => err.status === 409);
    assert.ok(await leases.get("hub"), "a stale delete leaves the Lease");
    await leases.delete("hub", current.metadata.resourceVersion);
    assert.equal(await leases.get("hub"), undefined);
    await leases.delete("hub");
    await leases.delete("never-was", "123");
  }));

Deno.test("LeaseClient passes failures other than a 404 through unchanged", async () => {
  const forbidden = new ApiError({ method: "GET", path: "/x", status: 403 });
  const leases = new LeaseClient({ request: () => Promise.reject(forbidden) }, "ns");
  await assert.rejects(leases.get("hub"), (err) => err === forbidden);
  await assert.rejects(leases.delete("hub"), (err) => err === forbidden);
});

Deno.test("LeaseClient builds percent-encoded Lease paths under coordination.k8s.io/v1", () => {
  const leases = new LeaseClient({ request: () => Promise.reject(new Error("unused")) }, "hub-system");
  assert.equal(leases.collection, "/apis/coordination.k8s.io/v1/namespaces/hub-system/leases");
  assert.equal(leases.path("shard/a b"), "/apis/coordination.k8s.io/v1/namespaces/hub-system/leases/shard%2Fa%20b");
});

Deno.test("microTime writes UTC with exactly six fractional digits", () => {
  assert.equal(microTime(Date.UTC(2026, 11, 3, 10, 0, 0, 123)), "2026-12-03T10:00:00.123000Z");
  assert.equal(microTime(0), "1970-01-01T00:00:00.000000Z");
  assert.equal(Date.parse(microTime(1_764_756_000_456)), 1_764_756_000_456);
});
