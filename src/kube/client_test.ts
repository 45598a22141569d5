// Tests for the pure parts of KubeClient: NDJSON framing, Status error mapping, timeouts, aborts and credential handling.

import assert from "node:assert/strict";
import { VirtualClock } from "../util/mod.ts";
import { NdjsonDecoder, NdjsonError } from "./wire/_ndjson.ts";
import { type FetchLike, KubeClient, type WatchEvent } from "./client.ts";
import { PARTIAL_METADATA_ACCEPT, PARTIAL_METADATA_LIST_ACCEPT, type ResponseInfo } from "./client_options.ts";
import { ApiError, TransportError } from "./errors.ts";
import type { ClusterAccess, ClusterAuth } from "./config/cluster_access.ts";

// Two self-signed public test CA certificates (no keys), so Deno.createHttpClient accepts them.
const CA_1 = `-----BEGIN CERTIFICATE-----
MIIBfjCCASWgAwIBAgIUVOKrnmddn6qZ5M95F66Y43rqoY8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJdGVzdC1jYS0xMCAXDTI2MTIwMjA5MTgxNVoYDzIxMjYxMTA4
MDkxODE1WjAUMRIwEAYDVQQDDAl0ZXN0LWNhLTEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQKIiUT3zQEi8d/2NDIbDEcJYtioh1KsXP9rP+XhcqvCvYzC7nOhjko
5ihRu4z9VE9kBRBJuUKU9GJok8b1GBjTo1MwUTAdBgNVHQ4EFgQUKTx0UicJWREW
S6cvzoDophQbIg8wHwYDVR0jBBgwFoAUKTx0UicJWREWS6cvzoDophQbIg8wDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAfHEFM5ljWr0vhJFGJpRdi
2kAdZ4a/IneDRa/mgGPsJAIgSzGdDz9RVHaMevbrKcKvZUVz3qKy0c8Ywlhz9cMI
5z0=
-----END CERTIFICATE-----\n`;
const CA_2 = `-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUOniILG3FlZRcWI/cYgL965zr5qowCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJdGVzdC1jYS0yMCAXDTI2MTIwMjA5MTgxNVoYDzIxMjYxMTA4
MDkxODE1WjAUMRIwEAYDVQQDDAl0ZXN0LWNhLTIwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATeL44MI7B7f9uAdltfwo8jrVOp8GYiDyEH+KqVZA/AjrnVVJBu4eVv
sKJQE8pZbRkUcaRkvMORbIBo8ulUvJoOo1MwUTAdBgNVHQ4EFgQUtsailH2TH9ur
g135x+FzcOwaFL8wHwYDVR0jBBgwFoAUtsailH2TH9urg135x+FzcOwaFL8wDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBce9x7z20z/RYxE1xzxhh+
7BilXcDHvvK34OLNCAZ42QIhALidSbMHrdnYcfWksTI8k474mwUhdStDMy/4fkHD
10No
-----END CERTIFICATE-----\n`;

const enc = new TextEncoder();

/** A ClusterAccess whose credentials a test controls. */
class FakeAccess implements ClusterAccess {
  readonly name = "fake";
  readonly server = "https://fake.invalid:6443";
  readonly source = "test";
  auth_: ClusterAuth = { headers: { Authorization: "Bearer secret-token-value" }, insecureSkipTlsVerify: false };
  authCalls = 0;
  invalidations = 0;
  auth(): Promise<ClusterAuth> {
    this.authCalls++;
    return Promise.resolve(structuredClone(this.auth_));
  }
  invalidate(): void {
    this.invalidations++;
  }
}

interface Seen {
  url: string;
  init: RequestInit & { client?: Deno.HttpClient };
}

/** A fetch that records requests and answers with `respond`. */
function fakeFetch(respond: (req: Seen) => Response | Promise<Response>): { fetch: FetchLike; seen: Seen[] } {
  const seen: Seen[] = [];
  return {
    seen,
    fetch: (url, init) => {
      const req = { url, init };
      seen.push(req);
      return Promise.resolve(respond(req));
    },
  };
}

/** A response body that the test feeds chunk by chunk. */
function pushBody(): {
  stream: ReadableStream<Uint8Array>;
  push(s: string | Uint8Array): void;
  end(): void;
  cancelled: () => boolean;
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      cancelled = true;
    },
  });
  return {
    stream,
    push: (s) => controller.enqueue(typeof s === "string" ? enc.encode(s) : s),
    end: () => controller.close(),
    cancelled: () => cancelled,
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

// --- NDJSON framing ------------------------------------------------------------------------

Deno.test("NdjsonDecoder joins lines and UTF-8 characters split across chunks", () => {
  const text =
    '{"type":"ADDED","object":{"n":"é☃"}}\n{"type":"BOOKMARK","object":{}}\r\n\n{"type":"DELETED","object":{"n":1}}\n';
  const bytes = enc.encode(text);
  for (const size of [1, 2, 3, 7, 64, bytes.length]) {
    const d = new NdjsonDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
    out.push(...d.end());
    assert.deepEqual(out, [
      { type: "ADDED", object: { n: "é☃" } },
      { type: "BOOKMARK", object: {} },
      { type: "DELETED", object: { n: 1 } },
    ], `chunk size ${size}`);
  }
});

Deno.test("NdjsonDecoder returns a final line without a newline at the end of the stream", () => {
  const d = new NdjsonDecoder();
  assert.deepEqual(d.push(enc.encode('{"a":1}\n{"b"')), [{ a: 1 }]);
  assert.equal(d.partial, true);
  assert.deepEqual(d.push(enc.encode(":2}")), []);
  assert.deepEqual(d.end(), [{ b: 2 }]);
});

Deno.test("NdjsonDecoder rejects a line that is not JSON without quoting it", () => {
  const d = new NdjsonDecoder();
  assert.throws(() => d.push(enc.encode('{"token":"leaky-secret"\n')), (err: unknown) => {
    assert.ok(err instanceof NdjsonError);
    assert.ok(!err.message.includes("leaky-secret"));
    return true;
  });
});

// --- Status mapping --------------------------------------------------------------------------

Deno.test("KubeClient.request() sends JSON with credentials and maps a Status error to ApiError without headers", async () => {
  const access = new FakeAccess();
  const infos: ResponseInfo[] = [];
  const { fetch, seen } = fakeFetch(() =>
    json(409, { kind: "Status", reason: "Conflict", message: "the object has been modified", code: 409 })
  );
  const client = new KubeClient(access, { fetch, onResponse: (i) => infos.push(i) });
  try {
    const err = await client.request("PATCH", "/apis/g/v1/namespaces/a/uuid/x/status", {
      body: { status: { uuid: "u" } },
      query: { fieldManager: "hub", dryRun: undefined },
    }).then(() => undefined, (e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(
      err.message,
      "PATCH /apis/g/v1/namespaces/a/uuid/x/status: 409 Conflict: the object has been modified",
    );
    assert.ok(!JSON.stringify({ m: err.message, s: err.stack }).includes("secret-token-value"));
    assert.equal(seen[0].url, "https://fake.invalid:6443/apis/g/v1/namespaces/a/uuid/x/status?fieldManager=hub");
    const headers = new Headers(seen[0].init.headers);
    assert.equal(headers.get("authorization"), "Bearer secret-token-value");
    assert.equal(headers.get("content-type"), "application/merge-patch+json");
    assert.equal(seen[0].init.body, '{"status":{"uuid":"u"}}');
    assert.ok(seen[0].init.client instanceof Deno.HttpClient);
    assert.deepEqual(infos.map((i) => [i.method, i.code]), [["PATCH", 409]]);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient drops cached credentials and calls invalidate() after a 401", async () => {
  const access = new FakeAccess();
  const { fetch } = fakeFetch(() =>
    json(401, { kind: "Status", reason: "Unauthorized", message: "Unauthorized", code: 401 })
  );
  const client = new KubeClient(access, { fetch, authTtlMs: 60_000 });
  try {
    const err = await client.request("GET", "/api").catch((e) => e);
    assert.ok(err instanceof ApiError && err.status === 401 && err.reason === "Unauthorized");
    assert.equal(access.invalidations, 1);
    await client.request("GET", "/api").catch(() => {});
    assert.equal(access.authCalls, 2, "credentials were fetched again after the 401");
  } finally {
    client.close();
  }
});

Deno.test("KubeClient reuses credentials for authTtlMs and rebuilds its HttpClient only when certificates change", async () => {
  const clock = new VirtualClock(1_000);
  const access = new FakeAccess();
  access.auth_ = { headers: {}, caCerts: [CA_1], insecureSkipTlsVerify: false };
  const { fetch, seen } = fakeFetch(() => json(200, { ok: true }));
  const client = new KubeClient(access, { fetch, clock, authTtlMs: 1_000 });
  try {
    assert.deepEqual(await client.request("GET", "/a"), { ok: true });
    await client.request("GET", "/a");
    assert.equal(access.authCalls, 1);
    await clock.advance(1_000);
    access.auth_ = { headers: { Authorization: "Bearer rotated" }, caCerts: [CA_1], insecureSkipTlsVerify: false };
    await client.request("GET", "/a");
    assert.equal(access.authCalls, 2);
    assert.equal(new Headers(seen[2].init.headers).get("authorization"), "Bearer rotated");
    assert.equal(seen[2].init.client, seen[0].init.client, "same TLS material keeps the HttpClient");
    await clock.advance(1_000);
    access.auth_ = { headers: {}, caCerts: [CA_2], insecureSkipTlsVerify: false };
    await client.request("GET", "/a");
    assert.notEqual(seen[3].init.client, seen[0].init.client, "a new CA builds a new HttpClient");
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.request() fails with a TransportError when no response arrives within requestTimeoutMs", async () => {
  const clock = new VirtualClock();
  const infos: ResponseInfo[] = [];
  const fetch: FetchLike = (_url, init) =>
    new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
  const client = new KubeClient(new FakeAccess(), {
    fetch,
    clock,
    requestTimeoutMs: 5_000,
    onResponse: (i) => infos.push(i),
  });
  try {
    const pending = client.request("GET", "/slow").catch((e) => e);
    await clock.advance(4_999);
    await clock.advance(1);
    const err = await pending;
    assert.ok(err instanceof TransportError, String(err));
    assert.equal(err.timeout, true);
    assert.match(err.message, /^GET \/slow: no complete response from https:\/\/fake.invalid:6443 within 5000 ms/);
    assert.deepEqual(infos.map((i) => [i.code, i.durationMs]), [["error", 5_000]]);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient opens a new connection after a request timed out or resetConnections(), never reusing a half-open one", async () => {
  const clock = new VirtualClock();
  const clients: (Deno.HttpClient | undefined)[] = [];
  let hang = true;
  const fetch: FetchLike = (_url, init) => {
    clients.push(init.client);
    if (!hang) return Promise.resolve(json(200, {}));
    return new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
  };
  const client = new KubeClient(new FakeAccess(), { fetch, clock, requestTimeoutMs: 5_000 });
  try {
    const pending = client.request("GET", "/slow").catch((e) => e);
    await clock.advance(5_000);
    assert.ok((await pending) instanceof TransportError);
    hang = false;
    await client.request("GET", "/a");
    await client.request("GET", "/a");
    assert.notEqual(clients[1], clients[0], "a request after a timeout uses a new HttpClient (new connections)");
    assert.equal(clients[2], clients[1], "healthy requests keep sharing one HttpClient");
    client.resetConnections();
    await client.request("GET", "/a");
    assert.notEqual(clients[3], clients[2], "resetConnections() makes the next request use a new HttpClient");
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.request() rejects with the caller's abort reason and a network failure as TransportError", async () => {
  const fetch: FetchLike = (_url, init) =>
    init.signal?.aborted
      ? Promise.reject(init.signal.reason)
      : Promise.reject(new TypeError("fetch failed", { cause: new Error("connection refused") }));
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const ac = new AbortController();
    const reason = new Error("stop");
    ac.abort(reason);
    assert.equal(await client.request("GET", "/x", { signal: ac.signal }).catch((e) => e), reason);
    const err = await client.request("GET", "/x").catch((e) => e);
    assert.ok(err instanceof TransportError);
    assert.equal(err.message, "GET /x: cannot reach https://fake.invalid:6443: connection refused");
    assert.ok(err.cause instanceof TypeError);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.listPage() passes limit and continue and returns the page's metadata", async () => {
  const { fetch, seen } = fakeFetch(() =>
    json(200, { items: [{ a: 1 }], metadata: { resourceVersion: "42", continue: "next", remainingItemCount: 3 } })
  );
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const page = await client.listPage("/apis/g/v1/uuid", { limit: 2, continueToken: "tok" });
    assert.deepEqual(page, { items: [{ a: 1 }], resourceVersion: "42", continueToken: "next", remainingItemCount: 3 });
    assert.equal(seen[0].url, "https://fake.invalid:6443/apis/g/v1/uuid?limit=2&continue=tok");
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() yields events split across chunks and ends when the stream ends", async () => {
  const body = pushBody();
  const { fetch, seen } = fakeFetch(() => new Response(body.stream, { status: 200 }));
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const e of client.watch("/apis/g/v1/uuid", { resourceVersion: "7", timeoutSeconds: 300 })) {
        events.push(e);
      }
    })();
    body.push('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
    body.push('FIED","object":{"metadata":{"name":"a"}}}\n');
    body.push('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n');
    body.end();
    await done;
    assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "BOOKMARK"]);
    assert.equal(
      seen[0].url,
      "https://fake.invalid:6443/apis/g/v1/uuid?watch=true&resourceVersion=7&timeoutSeconds=300&allowWatchBookmarks=true",
    );
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() throws ApiError before any event on a 410", async () => {
  const { fetch } = fakeFetch(() =>
    json(410, { kind: "Status", reason: "Expired", message: "too old resource version", code: 410 })
  );
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const events: WatchEvent[] = [];
    const err = await (async () => {
      for await (const e of client.watch("/w", { resourceVersion: "1", timeoutSeconds: 60 })) events.push(e);
    })().catch((e) => e);
    assert.ok(err instanceof ApiError && err.status === 410 && err.reason === "Expired");
    assert.equal(events.length, 0);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() calls onOpen when the server accepts the watch, before any event, and not on an error status", async () => {
  const body = pushBody();
  let status = 200;
  const { fetch } = fakeFetch(() =>
    status === 200 ? new Response(body.stream, { status: 200 }) : json(status, { kind: "Status", code: status })
  );
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    let opened = 0;
    const it = client.watch("/w", { resourceVersion: "1", timeoutSeconds: 60, onOpen: () => opened++ })[
      Symbol.asyncIterator
    ]();
    const first = it.next();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(opened, 1, "onOpen before the first event");
    body.push('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"2"}}}\n');
    assert.equal((await first).value?.type, "BOOKMARK");
    body.end();
    assert.equal((await it.next()).done, true);
    assert.equal(opened, 1);

    status = 429;
    let openedOnError = 0;
    const err = await (async () => {
      for await (
        const _ of client.watch("/w", {
          resourceVersion: "1",
          timeoutSeconds: 60,
          onOpen: () => openedOnError++,
        })
      ) {
        // no events expected
      }
    })().catch((e) => e);
    assert.ok(err instanceof ApiError && err.status === 429);
    assert.equal(openedOnError, 0);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() ends quietly and cancels the body when the signal aborts", async () => {
  const body = pushBody();
  const { fetch } = fakeFetch(() => new Response(body.stream, { status: 200 }));
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const e of client.watch("/w", { timeoutSeconds: 60, signal: ac.signal })) {
        events.push(e);
        if (events.length === 1) setTimeout(() => ac.abort(), 1);
      }
    })();
    body.push('{"type":"ADDED","object":{}}\n');
    await done;
    assert.equal(events.length, 1);
    assert.ok(body.cancelled(), "the response body was cancelled");
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.watch() fails a stream that outlives timeoutSeconds plus the grace period", async () => {
  const clock = new VirtualClock();
  const fetch: FetchLike = (_url, init) => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        init.signal?.addEventListener("abort", () => c.error(init.signal?.reason));
      },
    });
    return Promise.resolve(new Response(body, { status: 200 }));
  };
  const client = new KubeClient(new FakeAccess(), { fetch, clock, requestTimeoutMs: 1_000 });
  try {
    const done = (async () => {
      for await (const _ of client.watch("/w", { timeoutSeconds: 10 })) { /* none */ }
    })().catch((e) => e);
    await clock.advance(10_999);
    await clock.advance(1);
    const err = await done;
    assert.ok(err instanceof TransportError && err.timeout, String(err));
    assert.match(err.message, /outlived timeoutSeconds=10 by 1000 ms/);
  } finally {
    client.close();
  }
});

Deno.test("KubeClient.close() ends requests in flight and rejects new ones", async () => {
  const fetch: FetchLike = (_url, init) =>
    new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
  const client = new KubeClient(new FakeAccess(), { fetch });
  const pending = client.request("GET", "/x").catch((e) => e);
  await new Promise((r) => setTimeout(r, 0));
  client.close();
  const err = await pending;
  assert.ok(err instanceof TransportError && /was closed/.test(err.message), String(err));
  const late = await client.request("GET", "/x").catch((e) => e);
  assert.ok(late instanceof TransportError && /is closed/.test(late.message));
});

// --- Stream framing over a real socket (127.0.0.1 only) -------------------------------------

Deno.test("KubeClient.watch() reassembles events that a server writes in odd pieces, over real HTTP", async () => {
  const ac = new AbortController();
  const pieces = [
    '{"type":"ADDED","object":{"n":"☃',
    '"}}\n{"type":"DEL',
    'ETED","object":{"n":2}}\n',
    '{"type":"BOOKMARK","object":{}}',
  ];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} }, () => {
    const bytes = pieces.map((p) => enc.encode(p));
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        const next = bytes.shift();
        if (!next) return c.close();
        await new Promise((r) => setTimeout(r, 5));
        c.enqueue(next);
      },
    });
    return new Response(stream, { headers: { "content-type": "application/json" } });
  });
  const access: ClusterAccess = {
    name: "local",
    server: `http://127.0.0.1:${server.addr.port}`,
    source: "test",
    auth: () => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
  const client = new KubeClient(access);
  try {
    const events: WatchEvent[] = [];
    for await (const e of client.watch("/w", { timeoutSeconds: 5 })) events.push(e);
    assert.deepEqual(events, [
      { type: "ADDED", object: { n: "☃" } },
      { type: "DELETED", object: { n: 2 } },
      { type: "BOOKMARK", object: {} },
    ]);
  } finally {
    client.close();
    ac.abort();
    await server.finished;
  }
});

Deno.test("KubeClient lists and watches metadata-only with the PartialObjectMetadata Accept headers, and reads their answers", async () => {
  const body = pushBody();
  const { fetch, seen } = fakeFetch((req) =>
    req.url.includes("watch=true") ? new Response(body.stream, { status: 200 }) : json(200, {
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: "12" },
      items: [{ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "a" } }],
    })
  );
  const client = new KubeClient(new FakeAccess(), { fetch });
  try {
    const page = await client.listPage("/api/v1/configmaps", { metadataOnly: true });
    assert.equal(page.resourceVersion, "12");
    assert.deepEqual(page.items, [{
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "a" },
    }]);
    await client.listPage("/api/v1/configmaps", {});
    const events: WatchEvent[] = [];
    const done = (async () => {
      const opts = { resourceVersion: "12", timeoutSeconds: 60, metadataOnly: true };
      for await (const e of client.watch("/api/v1/configmaps", opts)) events.push(e);
    })();
    body.push('{"type":"MODIFIED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",');
    body.push('"metadata":{"name":"a","resourceVersion":"13"}}}\n');
    body.end();
    await done;
    assert.deepEqual(events.map((e) => [e.type, e.object.kind, e.object.metadata.resourceVersion]), [
      ["MODIFIED", "PartialObjectMetadata", "13"],
    ]);
    const accepts = seen.map((s) => (s.init.headers as Record<string, string>).Accept);
    assert.deepEqual(accepts, [PARTIAL_METADATA_LIST_ACCEPT, "application/json", PARTIAL_METADATA_ACCEPT]);
    assert.equal(
      PARTIAL_METADATA_LIST_ACCEPT,
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
    );
    assert.equal(
      PARTIAL_METADATA_ACCEPT,
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    );
  } finally {
    client.close();
  }
});
