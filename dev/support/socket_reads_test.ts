// Tests of the socket readers the gate's tests use: they return what arrived and never hang.
import assert from "node:assert/strict";
import { readToClose, readUntil } from "./socket_reads.ts";

/** A loopback pair: `client` connected to the server side `peer`. */
async function pair() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = await Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port });
  const peer = await listener.accept();
  listener.close();
  return { client, peer };
}

Deno.test("readToClose returns every byte sent before the peer closed", async () => {
  const { client, peer } = await pair();
  await peer.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\nhello"));
  peer.close();
  assert.equal(await readToClose(client), "HTTP/1.1 200 OK\r\n\r\nhello");
  client.close();
});

Deno.test("readToClose settles after its guard when the peer never closes", async () => {
  const { client, peer } = await pair();
  await peer.write(new TextEncoder().encode("partial"));
  // The guard closes the connection: what arrived comes back (or a hang-guard error), never a hang.
  const out = await readToClose(client, 50).catch((err: Error) => err.message);
  assert.match(out, /^partial$|hang guard/);
  peer.close();
});

Deno.test("readUntil returns once the pattern arrived, and fails when the peer closes first or nothing comes", async () => {
  const { client, peer } = await pair();
  await peer.write(new TextEncoder().encode("1:a"));
  assert.equal(await readUntil(client, /1:a/), "1:a");
  await assert.rejects(readUntil(client, /2:b/, 50), /hang guard/);
  peer.close();
  await assert.rejects(readUntil(client, /2:b/), /closed before/);
  client.close();
});
