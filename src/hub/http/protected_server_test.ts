// Tests of the protected port on a free loopback port, over real HTTPS with a self-signed pair, with an authorizer of
// our own that answers a fixed decision (the TokenReview/SubjectAccessReview side is tested in request_auth_test.ts).

import assert from "node:assert/strict";
import { join } from "node:path";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { withTempDir } from "../../../dev/support/local_client.ts";
import { Logger, silentLogger } from "../../util/mod.ts";
import { Hub } from "../hub.ts";
import { ProtectedServerError, serveProtected } from "./protected_server.ts";
import type { AccessDecision, RequestAuthorizer } from "./request_auth.ts";
import { selfSignedTls, type TlsPair } from "./tls_material.ts";
import { heldSockets, silentStrangers } from "../../../dev/support/held_sockets.ts";

/** An authorizer that answers `state.decision` and records what it was asked. */
function authorizer(decision: AccessDecision) {
  const state = { decision, asked: [] as string[] };
  const a = {
    decide: (authorization: string | null, path: string) => {
      state.asked.push(`${authorization} ${path}`);
      return Promise.resolve(state.decision);
    },
  } as unknown as RequestAuthorizer;
  return { a, state };
}

async function serve(
  decision: AccessDecision,
  tls?: TlsPair,
  extra: Partial<Parameters<typeof serveProtected>[1]> = {},
) {
  const { a, state } = authorizer(decision);
  const stop = new AbortController();
  const listens: number[] = [];
  const port = Promise.withResolvers<number>();
  const done = serveProtected(new Hub({ logger: silentLogger() }), {
    hostname: "127.0.0.1",
    port: 0,
    tls,
    authorizer: a,
    logger: silentLogger(),
    onListen: (addr) => {
      listens.push(addr.port);
      port.resolve(addr.port);
    },
    ...extra,
  }, stop.signal);
  const p = await port.promise;
  return {
    state,
    port: p,
    listens,
    base: `${tls ? "https" : "http"}://127.0.0.1:${p}`,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

Deno.test("The protected port serves /status and /metrics over HTTPS to an allowed caller, and 404 for other paths", async () => {
  const pair = await selfSignedTls();
  const s = await serve("allowed", pair);
  const client = Deno.createHttpClient({ caCerts: [pair.cert] });
  try {
    const headers = { authorization: "Bearer t" };
    const status = await fetch(`${s.base}/status`, { client, headers });
    assert.equal(status.status, 200);
    assert.equal(typeof (await status.json()).status, "string");
    const metrics = await fetch(`${s.base}/metrics`, { client, headers });
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^# HELP /m);
    const other = await fetch(`${s.base}/healthz`, { client, headers });
    assert.equal(other.status, 404);
    await other.body?.cancel();
    assert.deepEqual(s.state.asked, ["Bearer t /status", "Bearer t /metrics", "Bearer t /healthz"]);
  } finally {
    client.close();
    await s.stop();
  }
});

Deno.test("The protected port answers 401, 403 or 503 with a body that names nothing, and a browser gets the page", async () => {
  const s = await serve("unauthenticated");
  try {
    for (
      const [decision, code, body] of [
        ["unauthenticated", 401, "Unauthorized\n"],
        ["forbidden", 403, "Forbidden\n"],
        ["unavailable", 503, "Service Unavailable\n"],
      ] as const
    ) {
      s.state.decision = decision;
      for (const path of ["/status", "/metrics", "/nowhere"]) {
        const res = await fetch(s.base + path);
        assert.equal(res.status, code, `${decision} ${path}`);
        assert.equal(await res.text(), body, "decided before the path is even looked up");
      }
    }
    s.state.decision = "unauthenticated";
    const page = await fetch(`${s.base}/status`, { headers: { accept: "text/html" } });
    assert.equal(page.status, 401);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await page.text(), /<html/i);
  } finally {
    await s.stop();
  }
});

Deno.test("The protected port answers only GET and HEAD: anything else is 405 before any review", async () => {
  const s = await serve("allowed");
  try {
    const res = await fetch(`${s.base}/status`, { method: "POST", body: "{}" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    await res.body?.cancel();
    assert.deepEqual(s.state.asked, []);
    const head = await fetch(`${s.base}/status`, { method: "HEAD" });
    assert.equal(head.status, 200);
  } finally {
    await s.stop();
  }
});

Deno.test("serveProtected throws ProtectedServerError at once, naming the address, when the port is taken", async () => {
  const s = await serve("allowed");
  try {
    assert.throws(
      () =>
        serveProtected(new Hub({ logger: silentLogger() }), {
          hostname: "127.0.0.1",
          port: s.port,
          authorizer: authorizer("allowed").a,
          logger: silentLogger(),
        }, new AbortController().signal),
      (err: Error) => err instanceof ProtectedServerError && err.message.includes(`127.0.0.1:${s.port}`),
    );
  } finally {
    await s.stop();
  }
});

Deno.test("A rotated certificate is served on the same port; a refused pair is logged and the old one keeps serving", () =>
  withTempDir(async (dir) => {
    const first = await selfSignedTls();
    const certFile = join(dir, "tls.crt");
    const keyFile = join(dir, "tls.key");
    await Deno.writeTextFile(certFile, first.cert);
    await Deno.writeTextFile(keyFile, first.key);
    const lines: string[] = [];
    const s = await serve("allowed", first, {
      tlsFiles: { certFile, keyFile },
      tlsPollMs: 50,
      logger: new Logger({ level: "info", format: "json", write: (l) => lines.push(l) }),
    });
    try {
      const second = await selfSignedTls();
      await Deno.writeTextFile(keyFile, second.key);
      await Deno.writeTextFile(certFile, second.cert);
      await waitFor(() => s.listens.length >= 2, "the port bound again", 30_000, 20);
      assert.deepEqual(new Set(s.listens), new Set([s.port]), "the same port");
      const trusting = Deno.createHttpClient({ caCerts: [second.cert] });
      try {
        const res = await fetch(`${s.base}/status`, { client: trusting });
        assert.equal(res.status, 200, "the new certificate is served");
        await res.body?.cancel();
      } finally {
        trusting.close();
      }
      // A key that does not match the certificate is refused (lines from the rotation above are dropped first: its
      // key and certificate were written one after the other, and a read in between is refused too).
      lines.length = 0;
      await Deno.writeTextFile(keyFile, first.key);
      await waitFor(() => lines.some((l) => l.includes("rotated TLS certificate refused")), "the refusal logged");
      assert.equal(s.listens.length, 2, "no rebind for a refused pair");
    } finally {
      await s.stop();
    }
  }));

Deno.test("Connections that never send a TLS hello are closed on their TCP socket, evicted at the cap or at the header timeout, and hold no descriptor of the port; an allowed scrape still answers", async () => {
  const pair = await selfSignedTls();
  const s = await serve("allowed", pair, { limits: { maxConnections: 4, headerTimeoutMs: 400 } });
  const client = Deno.createHttpClient({ caCerts: [pair.cert] });
  // 36 are evicted to make room, the last 4 reach the header timeout. (The sockets behind the port, front to gate and
  // gate to Deno.serve, are counted port by port in gated_server_test.ts: a count over the whole process would also
  // count the sockets of the test files `deno test --parallel` runs beside this one.)
  const strangers = await silentStrangers(s.port, 40);
  try {
    assert.equal(await heldSockets(s.port), 0, "no socket of the port is held once its stranger was closed");
    assert.equal(strangers.stillOpen, 0, "every stranger's connection was closed by the port");
    const res = await fetch(`${s.base}/metrics`, { client, headers: { authorization: "Bearer t" } });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(await heldSockets(s.port), 0, "nor after a scrape");
  } finally {
    strangers.close();
    client.close();
    await s.stop();
  }
});
