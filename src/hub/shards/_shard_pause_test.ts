// Unit tests of the shard layer's pause: which clusters are paused, and the signals that cancel their reconciles.
import assert from "node:assert/strict";
import type { ReconcileTarget } from "../../runtime/mod.ts";
import { ShardPause } from "./_shard_pause.ts";

/** A target whose client and cross-cluster lookups record the signal each was bound to. */
function target() {
  const signals: AbortSignal[] = [];
  const t = {
    reconciler: { reconcile: () => Promise.resolve() },
    events: { record: () => {} },
    client: {
      withSignal: (s: AbortSignal) => {
        signals.push(s);
        return "client";
      },
    },
    cluster: (_name: string, s: AbortSignal) => {
      signals.push(s);
      return undefined;
    },
    clusters: () => ["prod", "dev"],
  } as unknown as ReconcileTarget;
  return { t, signals };
}

Deno.test("ShardPause hands targets back untouched until a cluster is first paused", () => {
  const pause = new ShardPause();
  pause.engaged("prod");
  const { t } = target();
  assert.equal(pause.bind("prod", t), t);
  assert.equal(pause.bind("prod", undefined), undefined);
});

Deno.test("ShardPause.pause() aborts the requests of reconciles bound before it, and later ones get a fresh signal", () => {
  const pause = new ShardPause();
  pause.engaged("prod");
  pause.engaged("dev");
  pause.pause("staging"); // pausing turns binding on, whichever cluster
  const { t, signals } = target();
  const before = pause.bind("prod", t)!;
  const own = new AbortController();
  before.client.withSignal(own.signal);
  before.cluster("dev", own.signal);
  const onDev = pause.bind("dev", t)!;
  onDev.client.withSignal(own.signal);
  assert.equal(signals.length, 3);
  assert.ok(signals.every((s) => !s.aborted));
  pause.pause("prod");
  assert.ok(signals[0].aborted && signals[1].aborted, "both of prod's bound signals aborted");
  assert.equal(signals[2].aborted, false, "dev's reconciles go on");
  pause.bind("prod", t)!.client.withSignal(own.signal);
  assert.equal(signals[3].aborted, false, "a reconcile bound after the pause starts with a live signal");
  assert.deepEqual(before.clusters?.(), ["prod", "dev"]);
});

Deno.test("ShardPause binds each reconcile to its own signal too: aborting one does not touch the cluster", () => {
  const pause = new ShardPause();
  pause.engaged("prod");
  pause.pause("dev");
  const { t, signals } = target();
  const own = new AbortController();
  pause.bind("prod", t)!.client.withSignal(own.signal);
  own.abort();
  assert.equal(signals[0].aborted, true);
  pause.bind("prod", t)!.client.withSignal(new AbortController().signal);
  assert.equal(signals[1].aborted, false);
});

Deno.test("ShardPause.resume() says whether the cluster was paused, and has() follows", () => {
  const pause = new ShardPause();
  assert.equal(pause.resume("prod"), false);
  pause.pause("prod");
  assert.equal(pause.has("prod"), true, "a cluster not engaged yet can be paused");
  assert.equal(pause.resume("prod"), true);
  assert.equal(pause.has("prod"), false);
  assert.equal(pause.resume("prod"), false);
});

Deno.test("ShardPause.disengaged() cancels the cluster's reconciles, and a target of a cluster not engaged is not bound", () => {
  const pause = new ShardPause();
  pause.engaged("prod");
  pause.pause("dev");
  const { t, signals } = target();
  pause.bind("prod", t)!.client.withSignal(new AbortController().signal);
  pause.disengaged("prod");
  assert.equal(signals[0].aborted, true);
  assert.equal(pause.bind("prod", t), t);
});
