// Unit tests of the per-cluster background stops the shard layer waits for.

import assert from "node:assert/strict";
import { Logger, silentLogger } from "../../util/mod.ts";
import { BackgroundStops } from "./_background_stops.ts";

/** A cluster whose background stop settles when `end` is called (rejects with `fail`). */
function cluster(name: string) {
  let end!: (fail?: Error) => void;
  const stopping = new Promise<void>((resolve, reject) => end = (fail) => fail ? reject(fail) : resolve());
  return { name, stopBackground: () => stopping, end };
}

const settled = async (p: Promise<void>) => {
  let done = false;
  p.then(() => done = true);
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

Deno.test("BackgroundStops settles at once for a cluster with no stop under way", async () => {
  assert.ok(await settled(new BackgroundStops(silentLogger()).stopped("prod")));
});

Deno.test("BackgroundStops settles only once the cluster's last stop ended", async () => {
  const stops = new BackgroundStops(silentLogger());
  const first = cluster("prod");
  const second = cluster("prod");
  stops.stop(first);
  stops.stop(second);
  first.end();
  assert.ok(!await settled(stops.stopped("prod")), "the second stop is still under way");
  second.end();
  assert.ok(await settled(stops.stopped("prod")));
  assert.ok(await settled(stops.stopped("staging")));
});

Deno.test("BackgroundStops logs a failed stop and still settles", async () => {
  const lines: Record<string, unknown>[] = [];
  const stops = new BackgroundStops(new Logger({ level: "info", write: (l) => lines.push(JSON.parse(l)) }));
  const c = cluster("prod");
  stops.stop(c);
  c.end(new Error("daemon would not stop"));
  await stops.stopped("prod");
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, "stopping background tasks failed");
  assert.equal(lines[0].cluster, "prod");
});
