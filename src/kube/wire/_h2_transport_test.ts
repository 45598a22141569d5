// withH2 against the real local apiserver of context prod: what goes on the HTTP/2 connection, what stays on the
// wrapped transport, the header check before either, and the fallback when the server offers HTTP/1.1 only.
import assert from "node:assert/strict";
import { adminToken, apiserverCa, apiserverUrl, requireClusters } from "../../../dev/support/local_clusters.ts";
import { VirtualClock } from "../../util/mod.ts";
import { Call } from "./_call.ts";
import { H2Streams } from "./_h2_streams.ts";
import { MultiplexPolicy, onH2, withH2 } from "./_h2_transport.ts";
import { http1OnlyPeer } from "../../../dev/support/http1_only_peer.ts";
import { headerCheck } from "./_header_lines.ts";
import type { Transport, WireResponse } from "./_transport_interface.ts";
import { TransportError } from "../errors.ts";

const newCall = () => new Call(new VirtualClock(0), undefined, new Set());

/** A wrapped transport that records what reaches it and answers 200 with `{}`. */
function recordingBase(): Transport & { sent: string[]; closed: boolean } {
  const base = {
    fp: "fp",
    sent: [] as string[],
    closed: false,
    send: (method: string, target: string) => {
      base.sent.push(`${method} ${target}`);
      const res: WireResponse = {
        status: 200,
        ok: true,
        header: () => null,
        text: () => Promise.resolve("{}"),
        chunks: async function* () {},
        discard: () => Promise.resolve(),
        cancel: () => {},
      };
      return Promise.resolve(res);
    },
    close: () => void (base.closed = true),
    inflight: 0,
    retired: false,
  };
  return base;
}

Deno.test("onH2() sends reads and the pre-flight's access and identity reviews as streams, never a write", () => {
  assert.equal(onH2("GET", "/api/v1/namespaces"), true);
  assert.equal(onH2("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"), true);
  assert.equal(onH2("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews"), true);
  for (
    const [method, target] of [["POST", "/api/v1/namespaces/a/events"], ["PATCH", "/api/v1/namespaces/a"], [
      "DELETE",
      "/api/v1/namespaces/a",
    ], ["PUT", "/apis/authorization.k8s.io/v1/x"]]
  ) {
    assert.equal(onH2(method, target), false, `${method} ${target}`);
  }
});

Deno.test("withH2() sends reads and watches as streams of one HTTP/2 connection to the apiserver, writes on the wrapped transport", async () => {
  requireClusters();
  const auth = { authorization: `Bearer ${adminToken("prod")}` };
  const h2 = new H2Streams({ origin: apiserverUrl("prod"), caCerts: [apiserverCa("prod")], rejectUnauthorized: true });
  const base = recordingBase();
  const t = withH2(base, () => Promise.resolve(h2), "", "hub-test", headerCheck());
  try {
    const version = await t.send("GET", "/version", auth, undefined, undefined, newCall());
    assert.equal(version.status, 200);
    assert.match(await version.text(), /gitVersion/);
    const watch = await t.send(
      "GET",
      "/api/v1/namespaces?watch=true&timeoutSeconds=5",
      auth,
      undefined,
      undefined,
      newCall(),
      undefined,
      true,
    );
    assert.equal(watch.status, 200);
    assert.equal(h2.sessions, 1);
    assert.equal(t.aliveWithin!(60_000), true);
    watch.cancel();
    await t.send("PATCH", "/api/v1/namespaces/x", auth, "application/merge-patch+json", "{}", newCall());
    assert.deepEqual(base.sent, ["PATCH /api/v1/namespaces/x"]);
  } finally {
    t.close();
  }
  assert.equal(base.closed, true);
  assert.equal(h2.sessions, 0);
});

Deno.test("withH2() refuses a credential or Content-Type with a line break before anything is sent, naming the header only", async () => {
  const h2 = new H2Streams({ origin: "https://127.0.0.1:9", rejectUnauthorized: true });
  const base = recordingBase();
  const t = withH2(base, () => Promise.resolve(h2), "", "hub-test", headerCheck());
  try {
    const bad = { authorization: "Bearer secret-token\r\nX-Evil: 1" };
    const err = await t.send("GET", "/version", bad, undefined, undefined, newCall()).catch((e) => e);
    assert.ok(err instanceof TransportError, String(err));
    assert.match(err.message, /"authorization" contains a line break/);
    assert.doesNotMatch(err.message, /secret-token/);
    await assert.rejects(
      t.send("POST", "/apis/authorization.k8s.io/v1/x", {}, "application/json\nX: y", "{}", newCall()),
      TransportError,
    );
    assert.equal(h2.sessions, 0, "no connection was opened");
    assert.deepEqual(base.sent, []);
  } finally {
    t.close();
  }
});

Deno.test("withH2() sends a read on the wrapped transport, then every request, once the server offers HTTP/1.1 only", async () => {
  requireClusters();
  const peer = http1OnlyPeer();
  const h2 = new H2Streams({
    origin: `https://127.0.0.1:${peer.port}`,
    caCerts: [apiserverCa("prod")],
    rejectUnauthorized: true,
  });
  const base = recordingBase();
  const t = withH2(base, () => Promise.resolve(h2), "/prefix", "hub-test", headerCheck());
  try {
    assert.equal((await t.send("GET", "/version", {}, undefined, undefined, newCall())).status, 200);
    await t.send("GET", "/api", {}, undefined, undefined, newCall(), undefined, true);
    assert.deepEqual(base.sent, ["GET /version", "GET /api"]);
    assert.equal(h2.sessions, 0);
    assert.equal(peer.received(), 0, "no request byte went to the HTTP/2 attempt");
  } finally {
    t.close();
    await peer.close();
  }
});

Deno.test('MultiplexPolicy: "auto" wants HTTP/2 only once more than its threshold of transports could multiplex, then for good; true and false are fixed', () => {
  const policy = new MultiplexPolicy(2);
  const [a, b] = [policy.route("auto"), policy.route("auto")];
  assert.equal(a.wanted(), false, "two transports: HTTP/1.1");
  b.release();
  b.release(); // a second release counts once
  const c = policy.route("auto");
  assert.equal(c.wanted(), false, "still two transports (one was closed)");
  const d = policy.route("auto");
  assert.deepEqual([a.wanted(), c.wanted(), d.wanted()], [true, true, true], "the third turns it on for every one");
  d.release();
  c.release();
  assert.equal(a.wanted(), true, "for good, as its watches moved");
  assert.equal(new MultiplexPolicy(0).route(false).wanted(), false);
  assert.equal(new MultiplexPolicy(99).route(true).wanted(), true);
});

Deno.test("withH2() sends reads and watches on the wrapped transport while its route does not want HTTP/2, without making the connection; once it does, the next read goes there", async () => {
  let connects = 0;
  let wanted = false;
  const connect = () => {
    connects++;
    return Promise.resolve(new H2Streams({ origin: "https://127.0.0.1:9", rejectUnauthorized: true }));
  };
  const base = recordingBase();
  const t = withH2(base, connect, "", "hub-test", headerCheck(), { wanted: () => wanted });
  try {
    await t.send("GET", "/version", {}, undefined, undefined, newCall());
    await t.send("GET", "/api?watch=true", {}, undefined, undefined, newCall(), undefined, true);
    assert.deepEqual(base.sent, ["GET /version", "GET /api?watch=true"]);
    assert.equal(connects, 0, "node:http2 never loaded, no connection made");
    assert.equal(t.aliveWithin!(60_000), false, "no HTTP/2 connection to vouch for the watches");
    wanted = true;
    await assert.rejects(t.send("GET", "/version", {}, undefined, undefined, newCall())); // nothing listens on :9
    assert.equal(connects, 1);
    assert.equal(base.sent.length, 2, "the read went to the HTTP/2 connection");
  } finally {
    t.close();
  }
});
