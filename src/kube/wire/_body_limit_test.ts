// Tests for the size cap on responses: the helpers, then KubeClient against a local server standing in for an
// attacker's API server (raw HTTP/1.1 on 127.0.0.1), through its own sockets and through fetch.
import assert from "node:assert/strict";
import { BodyLimitError, ByteScratch, declaredOverLimit, GrowingBytes, limitedText } from "./_body_limit.ts";
import { KubeClient } from "../client.ts";
import type { ClusterAccess, ClusterAuth } from "../config/cluster_access.ts";
import { failureStateOf, TooLargeError } from "../errors.ts";

const enc = new TextEncoder();
const TOKEN = "attacker-must-never-see-this-token";

Deno.test("declaredOverLimit() refuses a Content-Length over the limit and ignores one that fits, is absent or is malformed", () => {
  assert.equal(declaredOverLimit("536870912", 1024)?.declaredBytes, 536870912);
  assert.equal(declaredOverLimit("1024", 1024), undefined);
  assert.equal(declaredOverLimit(null, 1024), undefined);
  assert.equal(declaredOverLimit("lots", 1024), undefined);
});

Deno.test("limitedText() decodes up to the limit and refuses the byte after it", async () => {
  async function* pieces(...p: string[]) {
    for (const s of p) yield enc.encode(s);
  }
  assert.equal(await limitedText(pieces("h\u00e9", "llo"), 6), "h\u00e9llo");
  await assert.rejects(limitedText(pieces("h\u00e9", "llo!"), 6), BodyLimitError);
});

Deno.test("GrowingBytes doubles up to its limit, never past it, and decodes its bytes once", () => {
  const g = new GrowingBytes(16).reset(40);
  for (let i = 0; i < 4; i++) g.push(enc.encode("0123456789"));
  assert.equal(g.capacity, 40, "16, 32, then the limit instead of 64");
  assert.equal(g.text(), "0123456789".repeat(4));
});

Deno.test("ByteScratch lends the same buffer again after a refusal, and drops a large one after a read within limits", () => {
  const scratch = new ByteScratch();
  const first = scratch.take(1 << 20);
  first.push(new Uint8Array(200 * 1024));
  scratch.give(first, true);
  const again = scratch.take(1 << 20);
  assert.equal(again, first, "a refused read's buffer serves the next read");
  assert.equal(again.length, 0);
  scratch.give(again, false);
  assert.notEqual(scratch.take(1 << 20), first, "a large buffer is not kept once reads fit again");
  const small = scratch.take(1 << 20);
  scratch.give(small, false);
  assert.equal(scratch.take(1 << 20), small, "a small one is kept");
});

/** Where a scripted answer writes: `write` resolves false once the client closed the connection. */
type Answer = (write: (s: string | Uint8Array) => Promise<boolean>) => Promise<void>;

/** A raw HTTP/1.1 server on 127.0.0.1 answering each request with `answer(path)`; counts the body bytes it sent. */
function attacker(answer: (target: string) => Answer) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const seen: string[] = [];
  const served = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      (async () => {
        const buf = new Uint8Array(16 * 1024);
        let head = "";
        while (!head.includes("\r\n\r\n")) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) return;
          head += new TextDecoder().decode(buf.subarray(0, n));
        }
        seen.push(head);
        const target = head.split(" ")[1];
        await answer(target)(async (s) => {
          try {
            const bytes = typeof s === "string" ? enc.encode(s) : s;
            for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
            return true;
          } catch {
            return false;
          }
        });
      })().finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })();
  const { port } = listener.addr as Deno.NetAddr;
  return {
    server: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await served.catch(() => {});
    },
  };
}

/** Streams `total` bytes of `x` (no newline) in 64 KiB chunks of a chunked body, or until the client hangs up. */
const endlessChunked: Answer = async (write) => {
  if (!await write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  const frame = new Uint8Array([...enc.encode(`${chunk.length.toString(16)}\r\n`), ...chunk, 13, 10]);
  for (let sent = 0; sent < 512 * 1024 * 1024; sent += chunk.length) {
    if (!await write(frame)) return;
  }
};

const hugeLength: Answer = async (write) => {
  await write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 536870912\r\n\r\n{"items":[');
};

function access(server: string): ClusterAccess {
  const auth: ClusterAuth = { headers: { Authorization: `Bearer ${TOKEN}` }, insecureSkipTlsVerify: false };
  return { name: "evil", server, source: "test", auth: () => Promise.resolve(auth), invalidate: () => {} };
}

for (const transport of ["own sockets", "fetch"] as const) {
  const options = (max: number) => ({
    maxObjectBytes: max,
    requestTimeoutMs: 20_000,
    ...(transport === "fetch" ? { fetch: (url: string, init: RequestInit) => fetch(url, init) } : {}),
  });

  Deno.test(`KubeClient (${transport}) refuses a watch line over maxObjectBytes as too-large, naming the limit and the resource, not the token`, async () => {
    const a = attacker(() => endlessChunked);
    const client = new KubeClient(access(a.server), options(256 * 1024));
    try {
      const events = client.watch("/apis/demo.operator/v1/uuids", { resourceVersion: "1", timeoutSeconds: 60 });
      await assert.rejects(
        (async () => {
          for await (const _ of events) { /* none arrives */ }
        })(),
        (err: Error) => {
          assert.ok(err instanceof TooLargeError, String(err));
          assert.equal(failureStateOf(err), "too-large");
          assert.equal(err.limitBytes, 256 * 1024);
          assert.match(
            err.message,
            /^GET \/apis\/demo\.operator\/v1\/uuids: refused a watch event of more than 262144 bytes/,
          );
          assert.match(err.message, /the limit is 262144 bytes \(--max-object-bytes\)/);
          assert.doesNotMatch(err.message, new RegExp(TOKEN));
          return true;
        },
      );
    } finally {
      client.close();
      await a.close();
    }
  });

  Deno.test(`KubeClient (${transport}) refuses a list body whose Content-Length is over maxObjectBytes without reading it`, async () => {
    const a = attacker(() => hugeLength);
    const client = new KubeClient(access(a.server), options(1024 * 1024));
    try {
      await assert.rejects(client.listPage("/apis/demo.operator/v1/uuids"), (err: Error) => {
        assert.ok(err instanceof TooLargeError, String(err));
        assert.equal(err.declaredBytes, 536870912);
        assert.match(err.message, /refused a response body of 536870912 bytes \(Content-Length\)/);
        return true;
      });
    } finally {
      client.close();
      await a.close();
    }
  });

  Deno.test(`KubeClient (${transport}) refuses a chunked list body that never ends once past maxObjectBytes, then serves the next request`, async () => {
    let calls = 0;
    const a = attacker(() =>
      calls++ === 0 ? endlessChunked : async (write) => {
        const body = '{"items":[],"metadata":{"resourceVersion":"7"}}';
        await write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
      }
    );
    const client = new KubeClient(access(a.server), options(512 * 1024));
    try {
      await assert.rejects(
        client.listPage("/apis/demo.operator/v1/uuids"),
        (err: Error) => err instanceof TooLargeError && /more than 524288 bytes/.test(err.message),
      );
      assert.equal((await client.listPage("/apis/demo.operator/v1/uuids")).resourceVersion, "7");
    } finally {
      client.close();
      await a.close();
    }
  });
}
