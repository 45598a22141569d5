import assert from "node:assert/strict";
import type { WatchEvent } from "../../src/kube/mod.ts";
import { ReleasedWatchClient } from "./released_watch.ts";

Deno.test("ReleasedWatchClient counts its lists, streams its events only once released, and ends when aborted", async () => {
  const event: WatchEvent = { type: "ADDED", object: { metadata: { name: "a" } } };
  const client = new ReleasedWatchClient([{ metadata: { name: "x" } }], [event]);
  const page = await client.listPage();
  assert.equal(client.lists, 1);
  assert.equal(page.resourceVersion, "10");
  assert.equal(page.items.length, 1);
  const abort = new AbortController();
  let opened = false;
  const seen: WatchEvent[] = [];
  const done = (async () => {
    for await (const ev of client.watch("/x", { signal: abort.signal, onOpen: () => opened = true })) seen.push(ev);
  })();
  await new Promise((r) => setTimeout(r, 10));
  assert.ok(opened);
  assert.deepEqual(seen, [], "nothing before releaseEvents()");
  client.releaseEvents();
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seen, [event]);
  abort.abort();
  await done;
});
