// Unit tests for the attacker's stand-in listener.
import assert from "node:assert/strict";
import { RecordingListener } from "./recording_listener.ts";

Deno.test("RecordingListener records a request's bearer token and counts the connection, and close() settles with the client still waiting", async () => {
  const listener = RecordingListener.start();
  const marker = `marker-${crypto.randomUUID()}`;
  const request = fetch(`${listener.url("http")}/api`, {
    headers: { authorization: `Bearer ${marker}` },
    signal: AbortSignal.timeout(10_000),
  }).catch((err) => err);
  while (!listener.received(marker)) await new Promise((r) => setTimeout(r, 20));
  assert.equal(listener.connections.length, 1);
  assert.ok(listener.connections[0].bytes > marker.length);
  assert.equal(listener.received("not-sent-anywhere"), false);
  assert.match(listener.describe(), /^1 connection\(s\), \d+ byte\(s\) kept; first bytes: "GET \/api HTTP\/1\.1/);
  await listener.close();
  assert.ok(await request instanceof Error, "the client got no answer");
});

Deno.test("RecordingListener keeps no more than maxBytes but still counts every byte", async () => {
  const listener = RecordingListener.start({ maxBytes: 10 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await conn.write(new TextEncoder().encode("0123456789abcdef"));
  conn.close();
  while (listener.connections[0]?.bytes !== 16) await new Promise((r) => setTimeout(r, 20));
  assert.equal(listener.received("0123456789"), true);
  assert.equal(listener.received("abc"), false);
  await listener.close();
});
