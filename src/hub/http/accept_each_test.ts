// Tests for acceptEach: every accepted connection goes to serve, a refused one is not waited for, and the loop ends,
// calls end, and settles only after what it served settled; and for acceptCapped: the cap's slots decide who is
// served, refused or evicted.
import assert from "node:assert/strict";
import { acceptCapped, acceptEach } from "./accept_each.ts";
import type { SlotTable } from "./connection_slots.ts";

Deno.test("acceptEach() serves each connection, lets serve refuse one, and settles after end and every served connection", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let closed = false;
  let ended = 0;
  const served: Deno.Conn[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let accepted = 0;
  const loop = acceptEach(listener, () => closed, (conn) => {
    accepted++;
    if (accepted === 2) {
      conn.close(); // refused: taken care of here, nothing to wait for
      return;
    }
    served.push(conn);
    return held.then(() => conn.close());
  }, () => {
    ended++;
    closed = true;
    try {
      listener.close();
    } catch { /* closed */ }
  });
  const clients = [await Deno.connect({ port }), await Deno.connect({ port }), await Deno.connect({ port })];
  while (accepted < 3) await new Promise((r) => setTimeout(r, 5));
  assert.equal(served.length, 2, "the first and third served, the second refused");
  closed = true;
  listener.close();
  let settled = false;
  loop.then(() => settled = true);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(ended, 1, "end is called once the listener is closed");
  assert.equal(settled, false, "still waiting for the served connections");
  release();
  await loop;
  assert.equal(settled, true);
  for (const c of clients) c.close();
});

Deno.test("acceptCapped() serves a connection that gets a slot, refuses one that does not, and closes an evicted one before its evicted()", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  // A cap of one: the second connection evicts the first, the third is refused.
  const evictions: (() => void)[] = [];
  let opened = 0;
  const slots: SlotTable<Deno.Conn> = {
    open: (_conn, evict) => {
      opened++;
      if (opened === 3) return false;
      evictions.forEach((e) => e());
      evictions.length = 0;
      evictions.push(evict);
      return true;
    },
    has: () => true,
    mark: () => {},
    close: () => {},
  };
  const events: string[] = [];
  let closed = false;
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const loop = acceptCapped(listener, () => closed, {
    slots,
    admit: (conn) => {
      const n = opened + 1;
      return {
        serve: () => {
          events.push(`serve ${n}`);
          return held.then(() => {
            try {
              conn.close();
            } catch { /* evicted: closed already */ }
          });
        },
        evicted: () => events.push(`evicted ${n}`),
      };
    },
    shed: (reason) => events.push(reason),
    end: () => events.push("end"),
  });
  const clients: Deno.Conn[] = [];
  for (let i = 0; i < 3; i++) {
    clients.push(await Deno.connect({ port }));
    while (opened < i + 1) await new Promise((r) => setTimeout(r, 5));
  }
  // The first client's connection was closed by the eviction, the third's at once: both read EOF.
  for (const i of [0, 2]) assert.equal(await clients[i].read(new Uint8Array(1)), null, `client ${i + 1} sees EOF`);
  assert.deepEqual(events, ["serve 1", "evicted", "evicted 1", "serve 2", "refused"]);
  closed = true;
  listener.close();
  release();
  await loop;
  assert.equal(events.at(-1), "end");
  for (const c of clients) c.close();
});
