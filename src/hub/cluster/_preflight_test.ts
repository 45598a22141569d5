// Tests of one operator's pre-flight against the real local apiserver (context prod); backoff sleeps on virtual time.
import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace, localKubeClient } from "../../../dev/support/local_client.ts";
import { type KubeClient, type ResourceType, rulesReview } from "../../kube/mod.ts";
import { Informer, type Operator, trimObject } from "../../runtime/mod.ts";
import { Semaphore, silentLogger, VirtualClock } from "../../util/mod.ts";
import type { Slot } from "./_cluster_slot.ts";
import { FirstRulesReview } from "./_first_rules.ts";
import { preflight, type PreflightContext } from "./_preflight.ts";

/** Hang guard: an attempt is a few requests to a local apiserver; 20 s is far above any run seen. */
const HANG_GUARD_MS = 20_000;

const UUIDS: ResourceType = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };
const NOPES: ResourceType = { group: "nope.operator-hub.dev", version: "v1", kind: "Nope", plural: "nopes" };

function slot(resource: ResourceType, name = "uuid"): Slot {
  const operator: Operator = {
    name,
    resource,
    verbs: ["patchStatus"],
    events: false,
    uses: [],
    reconciler: { reconcile: () => Promise.resolve() },
  };
  return {
    operator,
    owns: true,
    informer: new Informer({ cluster: "prod", projection: trimObject, watches: () => [] }),
    others: [],
    info: { statusSubresource: false },
    target: {} as Slot["target"],
    preflight: { state: "registering", error: null, missing: [], attempts: 0 },
    changed: () => {},
  };
}

function context(client: KubeClient, clock: VirtualClock, over: Partial<PreflightContext> = {}): PreflightContext {
  return { cluster: "prod", api: client, client, namespaces: [], clock, log: silentLogger(), ...over };
}

Deno.test("preflight() passes at the first attempt where the resource is served and every right granted, and gives the gate's permit back", async () => {
  const client = await localKubeClient("prod");
  try {
    const s = slot(UUIDS);
    const gate = new Semaphore(1);
    const passed = await preflight(s, context(client, new VirtualClock(0), { gate }), new AbortController().signal);
    assert.equal(passed, true);
    assert.equal(s.preflight?.attempts, 1);
    assert.equal(s.preflight?.state, "connecting");
    assert.equal(s.preflight?.error, null);
    assert.equal(s.info.statusSubresource, true, "discovery found the status subresource");
    assert.equal(gate.held, 0);
  } finally {
    client.close();
  }
});

Deno.test("preflight() shows missing-crd for a resource the cluster does not serve, tries again after the backoff, and stops on abort", async () => {
  const client = await localKubeClient("prod");
  const clock = new VirtualClock(0);
  const stop = new AbortController();
  const s = slot(NOPES, "nope");
  const running = preflight(s, context(client, clock), stop.signal);
  try {
    await waitFor(() => s.preflight?.state === "missing-crd", "missing-crd", HANG_GUARD_MS, 20);
    assert.equal(s.preflight?.attempts, 1);
    assert.match(s.preflight?.error ?? "", /Nope/);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.preflight?.attempts, 1, "no second attempt before the backoff's virtual time passed");
    await clock.advance(30_000); // past the longest first backoff
    await waitFor(() => s.preflight!.attempts >= 2, "a second attempt", HANG_GUARD_MS, 20);
  } finally {
    stop.abort();
  }
  assert.equal(await running, false);
  client.close();
});

Deno.test("preflight() waits for the gate's permit before its first request", async () => {
  const client = await localKubeClient("prod");
  try {
    const gate = new Semaphore(1);
    const release = await gate.acquire();
    const s = slot(UUIDS);
    const running = preflight(s, context(client, new VirtualClock(0), { gate }), new AbortController().signal);
    await waitFor(() => gate.waiting === 1, "waiting for the permit", HANG_GUARD_MS, 20);
    assert.equal(s.preflight?.attempts, 1);
    assert.equal(s.info.statusSubresource, false, "no discovery before the permit");
    release();
    assert.equal(await running, true);
    assert.equal(s.info.statusSubresource, true);
  } finally {
    client.close();
  }
});

Deno.test("preflight() calls onFirstAttempt once, holding the gate's permit, and onFailedAttempt after each attempt that did not pass", async () => {
  const client = await localKubeClient("prod");
  const clock = new VirtualClock(0);
  const stop = new AbortController();
  const gate = new Semaphore(1);
  const calls: string[] = [];
  const hooks = (s: Slot): Partial<PreflightContext> => ({
    gate,
    onFirstAttempt: () => calls.push(`first ${s.operator.name} attempt ${s.preflight?.attempts} held ${gate.held}`),
    onFailedAttempt: () => calls.push(`failed ${s.operator.name} ${s.preflight?.state}`),
  });
  try {
    const maps = slot({ group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" }, "maps");
    assert.equal(await preflight(maps, context(client, clock, hooks(maps)), stop.signal), true);
    assert.deepEqual(calls, ["first maps attempt 1 held 1"], "a pass: the first-attempt hook only");

    calls.length = 0;
    const nope = slot(NOPES, "nope");
    const running = preflight(nope, context(client, clock, hooks(nope)), stop.signal);
    await waitFor(() => calls.length === 2, "the first attempt's hooks", HANG_GUARD_MS, 20);
    assert.deepEqual(calls, ["first nope attempt 1 held 1", "failed nope missing-crd"]);
    // Past the longest first backoff. On our own sockets a failed attempt can end while the virtual clock is still being
    // advanced (their reads may settle within its microtask flushes), so later backoffs within the 30 s run too.
    await clock.advance(30_000);
    await waitFor(() => calls.length >= 3, "the second attempt's failure", HANG_GUARD_MS, 20);
    assert.deepEqual(
      new Set(calls.slice(2)),
      new Set(["failed nope missing-crd"]),
      "only failures after the first attempt: no second first-attempt call",
    );
    stop.abort();
    assert.equal(await running, false);
  } finally {
    stop.abort();
    client.close();
  }
});

Deno.test("preflight() in a namespaced cluster checks the namespace's rules, one review shared by the operators' first attempts", () =>
  inLocalNamespace("prod", "preflight", async (client, namespace) => {
    let asks = 0;
    const firstRules = new FirstRulesReview((signal) => {
      asks++;
      return rulesReview(client, namespace, signal);
    }, 2);
    const ctx = context(client, new VirtualClock(0), { namespaces: [namespace], scope: { namespace, firstRules } });
    const signal = new AbortController().signal;
    const [a, b] = [slot(UUIDS, "uuid"), slot(UUIDS, "other")];
    assert.deepEqual(await Promise.all([preflight(a, ctx, signal), preflight(b, ctx, signal)]), [true, true]);
    assert.equal(asks, 1);
  }));
