// Unit tests for how a KubeClient reaches its server: an injected fetch, and our own HTTP/1.1 sockets against a
// loopback peer (the real apiservers exercise the same paths in tests/kube_client_test.ts).
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { Call } from "./_call.ts";
import { type FetchLike, makeTransport, type TransportOptions } from "./_transport.ts";
import { closeQuietly, type Transport } from "./_transport_interface.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";
import { TransportError } from "../errors.ts";

const AUTH: ClusterAuth = { headers: { Authorization: "Bearer secret-token" }, insecureSkipTlsVerify: false };
const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

const newCall = () => new Call(new VirtualClock(0), undefined, new Set());

/** Runs `fn` with no proxy variable set (they would route the transport through fetch), then restores them. */
async function withoutProxyEnv(fn: () => Promise<void>): Promise<void> {
  const saved = PROXY_VARS.map((k) => [k, Deno.env.get(k)] as const);
  for (const k of PROXY_VARS) Deno.env.delete(k);
  try {
    await fn();
  } finally {
    for (const [k, v] of saved) if (v !== undefined) Deno.env.set(k, v);
  }
}

/** A loopback HTTP peer that records each request's method, URL, headers and body, and answers with `respond`. */
function peer(respond: (req: Request) => Response | Promise<Response> = () => Response.json({ kind: "Status" })) {
  const seen: { method: string; url: string; headers: Headers; body: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: await req.text() });
    return respond(req);
  });
  return { server, seen, origin: `http://127.0.0.1:${server.addr.port}` };
}

function options(server: string, extra: Partial<TransportOptions> = {}): TransportOptions {
  return { server, userAgent: "operator-hub/test", http2: false, ...extra };
}

Deno.test("An injected fetch gets the server's URL, JSON Accept, the user agent, credentials, content type and no redirects", async () => {
  const seen: { url: string; init: RequestInit }[] = [];
  const fetch: FetchLike = (url, init) => {
    seen.push({ url, init });
    return Promise.resolve(Response.json({ ok: 1 }, { headers: { "Retry-After": "3" } }));
  };
  const t = makeTransport(AUTH, "fp-1", options("https://api.example:6443", { fetch }));
  assert.equal(t.fp, "fp-1");
  const call = newCall();
  const res = await t.send("PATCH", "/api/v1/namespaces/a", AUTH.headers, "application/merge-patch+json", "{}", call);
  assert.equal(seen[0].url, "https://api.example:6443/api/v1/namespaces/a");
  assert.equal(seen[0].init.method, "PATCH");
  assert.equal(seen[0].init.redirect, "manual");
  assert.deepEqual(seen[0].init.headers, {
    Accept: "application/json",
    "User-Agent": "operator-hub/test",
    Authorization: "Bearer secret-token",
    "Content-Type": "application/merge-patch+json",
  });
  assert.equal(seen[0].init.signal, call.signal);
  assert.equal(res.status, 200);
  assert.equal(res.ok, true);
  assert.equal(res.header("retry-after"), "3");
  assert.deepEqual(JSON.parse(await res.text()), { ok: 1 });
  t.close();
});

Deno.test("A fetch response's chunks() ends as soon as the call is aborted, mid-stream", async () => {
  let push!: (s: string) => void;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      push = (s) => c.enqueue(new TextEncoder().encode(s));
    },
  });
  const fetch: FetchLike = () => Promise.resolve(new Response(body));
  const t = makeTransport(AUTH, "fp", options("https://api.example", { fetch }));
  const call = newCall();
  const res = await t.send("GET", "/watch", AUTH.headers, undefined, undefined, call);
  const got: string[] = [];
  const reading = (async () => {
    for await (const chunk of res.chunks()) {
      got.push(new TextDecoder().decode(chunk));
      if (got.length === 1) call.close();
    }
  })();
  push("first");
  push("second");
  await reading;
  assert.deepEqual(got, ["first"]);
  t.close();
});

Deno.test("The HTTP/1.1 transport sends method, path under the server's prefix, headers and body to the server", () =>
  withoutProxyEnv(async () => {
    const p = peer((req) => Response.json({ path: new URL(req.url).pathname }));
    const t = makeTransport(AUTH, "fp", options(`${p.origin}/prefix/`));
    try {
      const res = await t.send("POST", "/api/v1/x", AUTH.headers, "application/json", '{"a":1}', newCall());
      assert.deepEqual(JSON.parse(await res.text()), { path: "/prefix/api/v1/x" });
      const res2 = await t.send("GET", "/api/v1/y", AUTH.headers, undefined, undefined, newCall());
      await res2.discard();
      assert.equal(p.seen.length, 2);
      const [post, get] = p.seen;
      assert.equal(post.method, "POST");
      assert.equal(post.headers.get("authorization"), "Bearer secret-token");
      assert.equal(post.headers.get("user-agent"), "operator-hub/test");
      assert.equal(post.headers.get("accept"), "application/json");
      assert.equal(post.headers.get("content-type"), "application/json");
      assert.equal(post.body, '{"a":1}');
      assert.equal(get.headers.get("content-type"), null, "no content type without one");
    } finally {
      t.close();
      await p.server.shutdown();
    }
  }));

Deno.test("The HTTP/1.1 transport refuses a header with a line break, naming the header but not its value", () =>
  withoutProxyEnv(async () => {
    const p = peer();
    const t = makeTransport(AUTH, "fp", options(p.origin));
    try {
      const bad = { Authorization: "Bearer secret\r\nX-Injected: 1" };
      await assert.rejects(t.send("GET", "/x", bad, undefined, undefined, newCall()), (err: Error) => {
        assert.ok(err instanceof TransportError);
        assert.match(err.message, /request header "Authorization" contains a line break/);
        assert.doesNotMatch(err.message, /secret|Injected/);
        return true;
      });
      await assert.rejects(t.send("GET", "/x", AUTH.headers, "a/b\nX: y", undefined, newCall()), /"Content-Type"/);
      assert.equal(p.seen.length, 0, "nothing was sent");
    } finally {
      t.close();
      await p.server.shutdown();
    }
  }));

Deno.test("A transport for insecure-skip-tls-verify answers through node:https, not the injected fetch", async () => {
  let fetched = 0;
  const fetch: FetchLike = () => {
    fetched++;
    return Promise.resolve(new Response("{}"));
  };
  // Port 9 on loopback refuses: the request must fail in node:https, never reach the injected fetch.
  const t = makeTransport({ ...AUTH, insecureSkipTlsVerify: true }, "fp", options("https://127.0.0.1:9", { fetch }));
  await assert.rejects(t.send("GET", "/version", AUTH.headers, undefined, undefined, newCall()));
  assert.equal(fetched, 0);
  t.close();
});

Deno.test("closeQuietly closes a transport and ignores one that throws because it is already closed", () => {
  let closes = 0;
  const t = { close: () => void closes++ } as unknown as Transport;
  closeQuietly(t);
  assert.equal(closes, 1);
  closeQuietly({
    close: () => {
      throw new Error("already closed");
    },
  } as unknown as Transport);
});

Deno.test("makeTransport() refuses a tls-server-name it cannot honour (HTTP/2, a proxy, a client certificate) on every request, sending nothing", async () => {
  const p = peer();
  const server = p.origin;
  try {
    const cases: [TransportOptions, ClusterAuth, RegExp][] = [
      [{ server, userAgent: "t", http2: true, tlsServerName: "api.example" }, AUTH, /--http2, a proxy-url/],
      [{ server, userAgent: "t", http2: false, proxyUrl: server, tlsServerName: "api.example" }, AUTH, /proxy/],
      [{ server, userAgent: "t", http2: false, tlsServerName: "api.example" }, {
        ...AUTH,
        cert: "-----BEGIN CERTIFICATE-----",
        key: "-----BEGIN PRIVATE KEY-----",
      }, /a client certificate/],
    ];
    await withoutProxyEnv(async () => {
      for (const [options, auth, why] of cases) {
        const t = makeTransport(auth, "fp", options);
        await assert.rejects(
          t.send("GET", "/version", {}, undefined, undefined, newCall()),
          (err: Error) =>
            err instanceof TransportError && /tls-server-name "api.example"/.test(err.message) &&
            why.test(err.message),
        );
        t.close();
      }
    });
    assert.equal(p.seen.length, 0, "nothing reached the server");
  } finally {
    await p.server.shutdown();
  }
});

Deno.test("Both transports send the Accept header a request names (a metadata-only list), application/json otherwise", () =>
  withoutProxyEnv(async () => {
    const accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    const p = peer();
    const own = makeTransport(AUTH, "fp", options(p.origin));
    const seen: RequestInit[] = [];
    const fetch: FetchLike = (_url, init) => (seen.push(init), Promise.resolve(Response.json({})));
    const viaFetch = makeTransport(AUTH, "fp", options("https://api.example", { fetch }));
    try {
      for (const t of [own, viaFetch]) {
        await (await t.send("GET", "/api/v1/configmaps", AUTH.headers, undefined, undefined, newCall(), accept))
          .discard();
        await (await t.send("GET", "/api/v1/configmaps", AUTH.headers, undefined, undefined, newCall())).discard();
        await (await t.send("GET", "/api/v1/configmaps", AUTH.headers, undefined, undefined, newCall(), accept))
          .discard();
      }
      assert.deepEqual(p.seen.map((r) => r.headers.get("accept")), [accept, "application/json", accept]);
      assert.deepEqual(p.seen.map((r) => r.headers.get("user-agent")), Array(3).fill("operator-hub/test"));
      assert.deepEqual(seen.map((i) => (i.headers as Record<string, string>).Accept), [
        accept,
        "application/json",
        accept,
      ]);
    } finally {
      closeQuietly(own);
      closeQuietly(viaFetch);
      await p.server.shutdown();
    }
  }));
