// Tests for acceptEach: every accepted connection goes to serve, a refused one is not waited for, and the loop ends,
// calls end, and settles only after what it served settled.
import assert from "node:assert/strict";
import { acceptEach } from "./accept_each.ts";

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
