import assert from "node:assert/strict";
import { bodyLength, ClientInput, headEnd } from "./request_framing.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("headEnd() is the index past the empty line (CRLF or bare LF), -1 short of it", () => {
  assert.equal(headEnd(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody")), 27);
  assert.equal(headEnd(enc.encode("GET / HTTP/1.1\nHost: x\n\nbody")), 24);
  for (const partial of ["GET / HTTP/1.1\r\nHost: x\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r", "GET /"]) {
    assert.equal(headEnd(enc.encode(partial)), -1, JSON.stringify(partial));
  }
});

Deno.test("bodyLength() tells a content-length body, none, and undefined whenever the request's end is not in its head", () => {
  const h = (s: string) => bodyLength(enc.encode(`${s}\r\n\r\n`));
  assert.equal(h("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 42"), 42);
  assert.equal(h("GET /a HTTP/1.1\r\nHost: x"), 0);
  assert.equal(h("POST /a HTTP/1.1\r\nconnection: keep-alive\r\ncontent-length: 0"), 0);
  for (
    const s of [
      "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked",
      "POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1",
      "POST /a HTTP/1.1\r\nContent-Length: -1",
      "POST /a HTTP/1.1\r\nContent-Length: 1e3",
      "GET /a HTTP/1.0\r\nHost: x",
      "GET /a HTTP/1.1\r\nConnection: Close",
      "GET /ws HTTP/1.1\r\nUpgrade: websocket",
    ]
  ) assert.equal(h(s), undefined, JSON.stringify(s));
});

Deno.test("ClientInput takes one head, then exactly a body, leaving a pipelined request buffered", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = await Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port });
  const server = await listener.accept();
  try {
    await client.write(enc.encode("POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhelloGET /2 HTTP/1.1\r\n\r\n"));
    const input = new ClientInput(server);
    const head = await input.head(1024);
    assert.ok(head instanceof Uint8Array);
    assert.equal(dec.decode(head), "POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\n");
    let body = "";
    await input.pipe(5, (b) => Promise.resolve(void (body += dec.decode(b))));
    assert.equal(body, "hello");
    assert.equal(dec.decode(await input.head(1024) as Uint8Array), "GET /2 HTTP/1.1\r\n\r\n");
    await client.write(enc.encode(`GET / HTTP/1.1\r\nX: ${"a".repeat(100)}`));
    assert.equal(await input.head(64), "oversized");
  } finally {
    client.close();
    server.close();
    listener.close();
  }
});
