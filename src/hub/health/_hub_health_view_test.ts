// Unit tests of the Hub's health assembly: clusters not engaged yet, registrations, trust, and the sections shown.

import assert from "node:assert/strict";
import { FairWorkQueue } from "../../queue/mod.ts";
import { Controller } from "../../runtime/mod.ts";
import { silentLogger, VirtualClock } from "../../util/mod.ts";
import { HubHealthView } from "./_hub_health_view.ts";
import { QueueSeries } from "./_queue_series.ts";
import { ReadinessRule } from "./_readiness_rule.ts";
import { CANNOT_SYNC_WEBHOOKS } from "../cluster/_untrusted_errors.ts";
import type { ClusterRegistration, HubShardStatus, RegistrationProblem } from "./hub_health.ts";
import { DEFAULT_LIMITS } from "../hub_limits.ts";
import { HubMetrics } from "./metrics.ts";

const at = "2026-01-01T00:00:00.000Z";

/** A view over no engaged cluster: `pending` names, `registrations` and `problems` as given. */
function view(
  pending: string[],
  registrations: Record<string, ClusterRegistration>,
  problems: Record<string, RegistrationProblem> = {},
) {
  const clock = new VirtualClock(1_000_000);
  const queue = new FairWorkQueue({ clock });
  return new HubHealthView({
    clusters: new Map(),
    pending: new Map(pending.map((n) => [n, undefined])),
    registrations: new Map(Object.entries(registrations)),
    problems: new Map(Object.entries(problems)),
    operators: new Map([["uuid", undefined], ["mirror", undefined]]),
    series: new QueueSeries(new HubMetrics(() => ({}))),
    queue,
    controller: new Controller({ queue, target: () => undefined, clock, logger: silentLogger() }),
    limits: { ...DEFAULT_LIMITS },
    clock,
    readiness: new ReadinessRule(undefined, undefined),
    running: () => false,
  });
}

Deno.test("HubHealthView shows pending and held clusters as registering with their registration, a pending one over a problem of its name", () => {
  const v = view(["prod", "r-dup"], { prod: { provider: "flag", registeredAt: at } }, {
    "r-dup": { provider: "secret", error: "name taken" },
    "r-bad": { provider: "secret", registeredAt: at, error: "kubeconfig refused" },
  });
  const h = v.build();
  assert.deepEqual(Object.keys(h.clusters).sort(), ["prod", "r-bad", "r-dup"]);
  assert.equal(h.clusters.prod.provider, "flag");
  assert.equal(h.clusters.prod.lastError, null);
  assert.equal(h.clusters["r-dup"].lastError, null, "pending wins over the problem");
  assert.equal(h.clusters["r-bad"].operators.mirror.lastError, "kubeconfig refused");
  assert.equal(h.clusters["r-bad"].registeredAt, at);
});

Deno.test("HubHealthView trusts a cluster by its registration, else by its held problem, else as the embedder's own", () => {
  const v = view(["own"], {
    prod: { provider: "flag", registeredAt: at },
    "r-1": { provider: "secret", registeredAt: at },
  }, {
    "r-held": { provider: "secret", error: "not yet" },
    "f-held": { provider: "flag", error: "not yet" },
  });
  assert.equal(v.commandLine("prod"), true);
  assert.equal(v.commandLine("r-1"), false);
  assert.equal(v.commandLine("r-held"), false);
  assert.equal(v.commandLine("f-held"), true);
  assert.equal(v.commandLine("own"), true);
  assert.equal(v.commandLine("never-seen"), true);
});

Deno.test("HubHealthView reads the shard, providers and admission sections each time, untrusted clusters' errors generic", () => {
  const v = view([], { prod: { provider: "flag", registeredAt: at }, "r-1": { provider: "secret", registeredAt: at } });
  const before = v.build();
  assert.equal(before.shard, undefined);
  assert.equal(before.providers, undefined);
  assert.equal(before.admission, undefined);
  let calls = 0;
  v.providers = () => (calls++, {});
  v.shard = { owner: () => "replica-b", status: () => ({ clusters: {} }) as unknown as HubShardStatus };
  v.admission = () => ({
    clusters: { prod: { lastError: "refused at 10.0.0.1" }, "r-1": { lastError: "refused at 10.0.0.2" } },
  });
  v.build();
  const h = v.build();
  assert.equal(calls, 2);
  assert.ok(h.shard);
  const a = h.admission as { clusters: Record<string, { lastError: string }> };
  assert.equal(a.clusters.prod.lastError, "refused at 10.0.0.1");
  assert.equal(a.clusters["r-1"].lastError, CANNOT_SYNC_WEBHOOKS);
});
