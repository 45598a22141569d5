// Unit tests for one cluster's health entry, built from its operators' slots (pre-flight, watches, caches).
import assert from "node:assert/strict";
import { Informer, type Operator, Store, trimObject, type Watcher, type WatchSnapshot } from "../../runtime/mod.ts";
import { contactHealth, type Preflight, type Slot, slotsHealth } from "./_cluster_slot.ts";

const NOW = 100_000;

function snap(over: Partial<WatchSnapshot> = {}): WatchSnapshot {
  return {
    phase: "watching",
    synced: true,
    lastEventAt: NOW - 1000,
    heartbeatAt: NOW,
    lastError: null,
    connectAttempts: 1,
    relists: 0,
    watchdogAborts: 0,
    ...over,
  };
}

/** An informer whose watchers report `snaps`; `objects` objects in its store. Counts snapshot() calls. */
function informer(snaps: WatchSnapshot[], objects = 0): Informer & { reads: () => number } {
  let reads = 0;
  const watchers = snaps.map((s) =>
    ({
      snapshot: () => {
        reads++;
        return s;
      },
      start: () => Promise.resolve(),
    }) as unknown as Watcher
  );
  const inf = new Informer({ cluster: "prod", projection: trimObject, watches: () => watchers });
  for (let i = 0; i < objects; i++) inf.store.upsert({ metadata: { namespace: "ns", name: `o${i}` } });
  inf.start(new AbortController().signal);
  return Object.assign(inf, { reads: () => reads });
}

function slot(
  inf: Informer,
  o: { preflight?: Preflight; owns?: boolean; others?: WatchSnapshot[]; otherStore?: Store } = {},
): Slot {
  const otherStore = o.otherStore ?? new Store();
  return {
    operator: {} as Operator,
    owns: o.owns ?? true,
    informer: inf,
    others: (o.others ?? []).map((s) => ({ snapshot: () => s, store: otherStore })),
    info: { statusSubresource: true },
    target: {},
    preflight: o.preflight ?? null,
    changed: () => {},
  } as unknown as Slot;
}

const inputs = (over: Partial<Parameters<typeof slotsHealth>[1]> = {}) => ({
  now: NOW,
  queueDepth: (op: string) => op.length,
  queueTotal: 42,
  wedgedAfterMs: 60_000,
  ...over,
});

Deno.test("An operator still in pre-flight reports the pre-flight's state, error and missing permissions, not synced", () => {
  const h = slotsHealth(
    new Map([[
      "uuid",
      slot(informer([snap()], 3), {
        preflight: { state: "forbidden", error: "cannot list uuid", missing: ["list uuid.demo.operator"], attempts: 4 },
      }),
    ]]),
    inputs(),
  );
  assert.deepEqual(h.operators.uuid, {
    state: "forbidden",
    synced: false,
    objects: 3,
    queue: 4,
    lastError: "cannot list uuid",
    missingPermissions: ["list uuid.demo.operator"],
  });
  assert.equal(h.state, "forbidden");
  assert.equal(h.synced, false);
  assert.equal(h.connectAttempts, 4, "pre-flight attempts count as connect attempts");
  assert.deepEqual(h.missingPermissions, ["list uuid.demo.operator"]);
  assert.equal(h.lastError, "cannot list uuid");
});

Deno.test("After pre-flight, an operator's state is the worst of its watches, whichever namespace's watch is listed first", () => {
  const cases: [WatchSnapshot["phase"][], WatchSnapshot["phase"]][] = [
    [["syncing", "forbidden"], "forbidden"],
    [["forbidden", "syncing"], "forbidden"],
    [["watching", "unreachable", "syncing"], "unreachable"],
  ];
  for (const [phases, expected] of cases) {
    const h = slotsHealth(
      new Map([["op", slot(informer(phases.map((phase) => snap({ phase, synced: false }))))]]),
      inputs(),
    );
    assert.equal(h.operators.op.state, expected, phases.join(","));
    assert.equal(h.state, expected);
  }
});

Deno.test("A cluster's state is the worst of its operators', and synced only when every operator is", () => {
  const h = slotsHealth(
    new Map([
      ["a", slot(informer([snap()]))],
      ["b", slot(informer([snap({ phase: "syncing", synced: false, lastError: "list page 3 failed" })]))],
    ]),
    inputs(),
  );
  assert.deepEqual([h.operators.a.state, h.operators.b.state, h.state], ["watching", "syncing", "syncing"]);
  assert.deepEqual([h.operators.a.synced, h.operators.b.synced, h.synced], [true, false, false]);
  assert.equal(h.lastError, "list page 3 failed");
  assert.equal(h.queue, 42);
});

Deno.test("Operators sharing one informer count its objects and watch counters once", () => {
  const shared = informer([snap({ connectAttempts: 2, relists: 1, watchdogAborts: 3 })], 5);
  const h = slotsHealth(
    new Map([["a", slot(shared)], ["b", slot(shared)], ["c", slot(informer([snap()], 2))]]),
    inputs(),
  );
  assert.equal(h.objects, 7);
  assert.equal(h.operators.a.objects, 5);
  assert.equal(h.operators.b.objects, 5);
  assert.equal(h.connectAttempts, 3);
  assert.equal(h.relists, 1);
  assert.equal(h.watchdogAborts, 3);
  assert.equal(shared.reads(), 1, "one snapshot per informer");
});

Deno.test("An owning operator without a watch yet is connecting and not synced", () => {
  const h = slotsHealth(new Map([["op", slot(informer([]))]]), inputs());
  assert.deepEqual([h.operators.op.state, h.operators.op.synced], ["connecting", false]);
});

Deno.test("Where an operator does not own its resource, its health is its other watches', or watching with none", () => {
  const others = slotsHealth(
    new Map([[
      "op",
      slot(informer([snap({ phase: "unreachable" })]), {
        owns: false,
        others: [snap({ phase: "syncing", synced: false })],
      }),
    ]]),
    inputs(),
  );
  assert.deepEqual([others.operators.op.state, others.operators.op.synced], ["syncing", false]);
  const none = slotsHealth(
    new Map([["op", slot(informer([snap({ phase: "unreachable" })]), { owns: false })]]),
    inputs(),
  );
  assert.deepEqual([none.operators.op.state, none.operators.op.synced], ["watching", true]);
});

Deno.test("lastEventAgeSeconds is the age of the newest event to a tenth of a second, null before any", () => {
  const h = slotsHealth(
    new Map([["op", slot(informer([snap({ lastEventAt: NOW - 12_340 }), snap({ lastEventAt: NOW - 2_560 })]))]]),
    inputs(),
  );
  assert.equal(h.lastEventAgeSeconds, 2.6);
  const fresh = slotsHealth(new Map([["op", slot(informer([snap({ lastEventAt: undefined })]))]]), inputs());
  assert.equal(fresh.lastEventAgeSeconds, null);
});

Deno.test("A cluster is wedged once a watch loop's heartbeat is older than wedgedAfterMs", () => {
  const at = (heartbeatAt: number) =>
    slotsHealth(new Map([["op", slot(informer([snap({ heartbeatAt })]))]]), inputs()).wedged;
  assert.equal(at(NOW - 60_000), false);
  assert.equal(at(NOW - 60_001), true);
});

Deno.test("Missing permissions are listed once for the cluster even when several operators miss them", () => {
  const preflight = (missing: string[]): Preflight => ({ state: "forbidden", error: "x", missing, attempts: 1 });
  const h = slotsHealth(
    new Map([
      ["a", slot(informer([]), { preflight: preflight(["list pods", "watch pods"]) })],
      ["b", slot(informer([]), { preflight: preflight(["watch pods", "get secrets"]) })],
    ]),
    inputs(),
  );
  assert.deepEqual(h.missingPermissions, ["list pods", "watch pods", "get secrets"]);
});

Deno.test("A cluster without operators is watching and synced, with nothing counted", () => {
  const h = slotsHealth(new Map(), inputs());
  assert.deepEqual(
    [h.state, h.synced, h.objects, h.connectAttempts, h.lastEventAgeSeconds, h.wedged],
    ["watching", true, 0, 0, null, false],
  );
});

Deno.test("watchedObjects counts what the other watches cache, each shared store once, and is absent without any", () => {
  const store = new Store();
  for (const name of ["a", "b"]) store.upsert({ metadata: { namespace: "ns", name } });
  const h = slotsHealth(
    new Map([
      ["op", slot(informer([snap()], 7), { others: [snap(), snap()], otherStore: store })],
      ["bare", slot(informer([snap()]))],
    ]),
    inputs(),
  );
  assert.equal(h.operators.op.watchedObjects, 2, "two watchers of one store");
  assert.equal(h.operators.op.objects, 7, "objects still counts the operator's own resource only");
  assert.equal("watchedObjects" in h.operators.bare, false);
});

Deno.test("contactHealth() shows every operator in the first contact's state and error, its attempts, nothing cached or synced", () => {
  const contact = { state: "unreachable" as const, error: "cannot connect to 127.0.0.1:9", attempts: 3 };
  const h = contactHealth(["uuid", "mirror"], contact, {
    now: 0,
    queueDepth: () => 0,
    queueTotal: 0,
    wedgedAfterMs: 1000,
  });
  assert.equal(h.state, "unreachable");
  assert.equal(h.synced, false);
  assert.equal(h.lastError, "cannot connect to 127.0.0.1:9");
  assert.deepEqual(Object.keys(h.operators), ["uuid", "mirror"]);
  assert.equal(h.operators.mirror.state, "unreachable");
  assert.equal(h.operators.mirror.lastError, "cannot connect to 127.0.0.1:9");
  assert.equal(h.objects, 0);
  assert.equal(h.connectAttempts, 3);
});
