// The hub's ports under attack, against a real hub on the real local apiservers: a TokenReview flood, slow clients
// on both ports, idle and slowloris connections filling the protected port, and a foreign Host header on
// loopback-bound ports (DNS rebinding).

import assert from "node:assert/strict";
import { freePort, HubProcess } from "../../dev/support/hub_process.ts";
import { adminToken, apiserverMetrics, testNamespace } from "../support/mod.ts";
import { metricSum, parseMetrics } from "../support/prometheus_text.ts";
import { tempDir } from "../../dev/support/fault_cluster.ts";
import { WebhookFlood } from "../../dev/support/webhook_flood.ts";
import { curl, opensslPair, readerAccount, startProtectedHub, waitProbe } from "./_protected_support.ts";

/** A namespace no test creates: the hubs here watch it, so they never touch another file's objects. */
const IDLE_NAMESPACE = "port-hardening-idle";
/** The hub's review limits (request_auth.ts defaults): bucket of 20, 10 per second. */
const REVIEW_BURST = 20;
const REVIEWS_PER_SECOND = 10;
/** The gate's header timeout (connection_gate.ts default), and how long past it a slow client may still be open. */
const HEADER_TIMEOUT_MS = 10_000;
const MARGIN_MS = 5_000;
/** The port's connection cap (connection_gate.ts default). */
const MAX_CONNECTIONS = 256;

const tokenReviewsAtApiserver = async () =>
  metricSum(parseMetrics(await apiserverMetrics("prod")), "apiserver_request_total", {
    resource: "tokenreviews",
    verb: "POST",
  });

/** Runs `jobs` with at most `limit` at once. */
async function pool<T>(count: number, limit: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await job(i);
    }
  }));
  return out;
}

Deno.test("A flood of 5,000 junk bearer tokens on the protected port sends the home apiserver only the TokenReviews its rate allows, answers each junk request 401 or 429 with Retry-After, and a reader reviewed before keeps getting 200", async () => {
  const ns = await testNamespace("ports-flood", { contexts: ["prod"] });
  const reader = await readerAccount("prod", ns.name, "reader", { metricsReader: true });
  const { hub, url } = startProtectedHub({ clusters: ["prod"], secure: false, args: ["--namespace", IDLE_NAMESPACE] });
  try {
    await waitProbe(hub, (s) => s === 200, "ready");
    const readerToken = await reader.token();
    assert.equal((await curl(`${url}/metrics`, readerToken)).status, 200, "the reader is reviewed before the flood");

    const before = await tokenReviewsAtApiserver();
    const started = performance.now();
    let flooding = true;
    const readerStatuses: number[] = [];
    const readerLoop = (async () => {
      while (flooding) {
        const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${readerToken}` } });
        await res.body?.cancel();
        readerStatuses.push(res.status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const junk = await pool(5_000, 64, async (i) => {
      const res = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer junk-${i}-${crypto.randomUUID()}` },
      });
      await res.body?.cancel();
      return { status: res.status, retryAfter: res.headers.get("retry-after") };
    });
    flooding = false;
    await readerLoop;
    const seconds = (performance.now() - started) / 1000;
    const reviews = (await tokenReviewsAtApiserver()) - before;

    const byStatus: Record<number, number> = {};
    for (const r of junk) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    console.log(
      `flood: 5000 junk tokens in ${seconds.toFixed(1)} s, answers ${JSON.stringify(byStatus)}, ` +
        `TokenReviews at the apiserver ${reviews}, reader scrapes ${readerStatuses.length}`,
    );
    assert.deepEqual(
      Object.keys(byStatus).filter((s) => s !== "401" && s !== "429"),
      [],
      `junk got only 401 or 429: ${JSON.stringify(byStatus)}`,
    );
    assert.ok((byStatus[429] ?? 0) > 0, "the flood was throttled");
    for (const r of junk) if (r.status === 429) assert.equal(r.retryAfter, "1");
    // Other files' hubs may review a few tokens in prod meanwhile: a slack of 30.
    const bound = REVIEW_BURST + Math.ceil(seconds * REVIEWS_PER_SECOND) + 30;
    assert.ok(reviews <= bound, `${reviews} TokenReviews for the flood; at most ${bound} allowed`);
    assert.ok(readerStatuses.length > 0, "the reader scraped during the flood");
    assert.deepEqual(readerStatuses.filter((s) => s !== 200), [], "the reviewed reader kept getting 200");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub.kill();
    await reader.cleanup();
    await ns.cleanup();
  }
});

/** Half-sent requests: when each was opened and when the server closed it (0 while open), from performance.now(). */
class SlowClients {
  readonly openedAt: number[] = [];
  readonly closedAt: number[] = [];
  readonly conns: Deno.Conn[] = [];

  /** Opens a connection, sends half a request head, and records when the server closes it. */
  async open(connect: () => Promise<Deno.Conn>): Promise<void> {
    const conn = await connect();
    const i = this.conns.push(conn) - 1;
    this.openedAt[i] = performance.now();
    this.closedAt[i] = 0;
    await conn.write(new TextEncoder().encode("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")).catch(() => {});
    conn.read(new Uint8Array(1024)).then(
      () => (this.closedAt[i] = performance.now()),
      () => (this.closedAt[i] = performance.now()),
    );
  }

  /** Connections still open more than `ms` after they were opened. */
  heldLongerThan(ms: number): number {
    const now = performance.now();
    return this.openedAt.filter((t, i) => (this.closedAt[i] || now) - t > ms).length;
  }

  /** The longest any connection was held, in ms. */
  longestHeldMs(): number {
    const now = performance.now();
    return Math.round(Math.max(...this.openedAt.map((t, i) => (this.closedAt[i] || now) - t)));
  }

  closeAll(): void {
    for (const c of this.conns) {
      try {
        c.close();
      } catch { /* closed by the hub */ }
    }
  }
}

Deno.test("500 half-sent requests on each port are all closed within the header timeout plus 5 s, while /healthz and an authorised /metrics keep answering 200", async () => {
  const dir = await tempDir("ports-slow");
  const pem = await opensslPair(dir.path, "serving", "operator-hub-ports");
  const { hub, url } = startProtectedHub({
    clusters: ["prod"],
    args: [
      "--namespace",
      IDLE_NAMESPACE,
      "--tls-cert-file",
      `${dir.path}/serving.crt`,
      "--tls-private-key-file",
      `${dir.path}/serving.key`,
    ],
  });
  const protectedPort = Number(new URL(url).port);
  const plain = new SlowClients();
  const tls = new SlowClients();
  const client = Deno.createHttpClient({ caCerts: [pem.ca] });
  try {
    await waitProbe(hub, (s) => s === 200, "ready");
    const admin = adminToken("prod");
    const started = performance.now();
    await pool(500, 25, () => plain.open(() => Deno.connect({ hostname: "127.0.0.1", port: hub.port })));
    await pool(500, 25, async () => {
      await tls.open(() => Deno.connectTls({ hostname: "127.0.0.1", port: protectedPort, caCerts: [pem.ca] }));
    });
    const opened = performance.now() - started;
    // During the attack: the probe and an authorised scrape still answer.
    const probe = await hub.get("/healthz");
    assert.equal(probe.status, 200, "the liveness probe answers during the attack");
    const scrape = await fetch(`${url}/metrics`, { client, headers: { authorization: `Bearer ${admin}` } });
    await scrape.body?.cancel();
    assert.equal(scrape.status, 200, "an authorised scrape answers during the attack");

    const lastOpened = Math.max(...plain.openedAt, ...tls.openedAt);
    await new Promise((r) => setTimeout(r, lastOpened + HEADER_TIMEOUT_MS + MARGIN_MS - performance.now()));
    const limit = HEADER_TIMEOUT_MS + MARGIN_MS;
    console.log(
      `slow clients: 500 + 500 opened in ${Math.round(opened)} ms; held past ${limit} ms: ` +
        `liveness ${plain.heldLongerThan(limit)}, protected ${tls.heldLongerThan(limit)}; longest held ` +
        `${plain.longestHeldMs()} ms and ${tls.longestHeldMs()} ms`,
    );
    assert.equal(plain.heldLongerThan(limit), 0, "half-sent requests still held on the liveness port");
    assert.equal(tls.heldLongerThan(limit), 0, "half-sent requests still held on the protected port");
    assert.equal((await hub.get("/readyz")).status, 200, "the port serves after the attack");
    // The hub counts what it shed, by port: each slow client exactly once (evicted at the cap or timed out).
    const scraped = await fetch(`${url}/metrics`, { client, headers: { authorization: `Bearer ${admin}` } });
    const metrics = parseMetrics(await scraped.text());
    for (const port of ["liveness", "protected"]) {
      assert.equal(metricSum(metrics, "hub_http_connections_shed_total", { port }), 500, `shed on ${port}`);
      assert.ok(metricSum(metrics, "hub_http_connections_shed_total", { port, reason: "timedOut" }) > 0, port);
    }
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    plain.closeAll();
    tls.closeAll();
    client.close();
    await hub.kill();
    await dir.remove();
  }
});

/** How many file descriptors process `pid` holds now (/proc/PID/fd). */
async function openFds(pid: number): Promise<number> {
  let n = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
  return n;
}

Deno.test("2,000 idle connections (1,500 that never send a TLS hello) and 200 slowloris heads, reopened as the protected port closes them: the hub holds at most 3 descriptors per connection slot and authorised scrapes get 200", async () => {
  const dir = await tempDir("ports-fds");
  const pem = await opensslPair(dir.path, "serving", "operator-hub-ports");
  const { hub, url } = startProtectedHub({
    clusters: ["prod"],
    args: [
      "--namespace",
      IDLE_NAMESPACE,
      "--tls-cert-file",
      `${dir.path}/serving.crt`,
      "--tls-private-key-file",
      `${dir.path}/serving.key`,
    ],
  });
  const client = Deno.createHttpClient({ caCerts: [pem.ca] });
  let flood: WebhookFlood | undefined;
  let sampling = true;
  try {
    await waitProbe(hub, (s) => s === 200, "ready");
    const admin = adminToken("prod");
    const scrape = async () => {
      try {
        const res = await fetch(`${url}/metrics`, { client, headers: { authorization: `Bearer ${admin}` } });
        await res.body?.cancel();
        return res.status;
      } catch (err) {
        return String((err as Error).cause ?? err);
      }
    };
    assert.equal(await scrape(), 200, "the admin token is reviewed before the flood");
    const baseline = await openFds(hub.pid);
    let peak = baseline;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await openFds(hub.pid).catch(() => 0));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const maxOpens = 6_000;
    flood = new WebhookFlood({
      port: Number(new URL(url).port),
      caCert: pem.ca,
      tcpIdle: 1_500,
      tlsIdle: 300,
      slowloris: 200,
      path: "/metrics",
      maxOpens,
      maxDurationMs: 20_000,
    });
    const started = performance.now();
    flood.start();
    await flood.firstPass;
    // While strangers reopen what the port closes as fast as they can: scrapes, each on a new connection (as
    // Prometheus does). A newcomer has 256 newcomers' time to send its request, a fraction of a second at this rate
    // on a loaded machine, so one may lose its connection; the next scrape gets through.
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(await scrape());
      await new Promise((r) => setTimeout(r, 200));
    }
    // The flood's opens spent (or 12 s gone): what is left open is what strangers hold, and the hub's share of it.
    const spentBy = Date.now() + 12_000;
    while (flood.stats.opened + flood.stats.failed < maxOpens && Date.now() < spentBy) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const held = await openFds(hub.pid);
    const stats = flood.stats;
    const after = await scrape();
    await flood.stop();
    sampling = false;
    await sampler;
    // Each connection slot costs the hub at most 3 descriptors (the client's socket, the front's to the TLS gate and
    // the gate's end of it): a bound that does not grow with what strangers open.
    const bound = 3 * MAX_CONNECTIONS + 64;
    console.log(
      `protected port flood: ${JSON.stringify(stats)} after ${Math.round(performance.now() - started)} ms; ` +
        `scrapes ${JSON.stringify(statuses)} then ${after}; hub descriptors ${baseline} at rest, ${held} with the ` +
        `strangers' connections held (bound +${bound}), peak ${peak} while they reopened`,
    );
    assert.ok(stats.opened >= 2_000, `the flood opened its connections: ${JSON.stringify(stats)}`);
    assert.ok(held - baseline <= bound, `the hub held ${held - baseline} descriptors over its ${baseline}`);
    assert.ok(statuses.includes(200), `an authorised scrape got through while strangers reopened: ${statuses}`);
    assert.equal(after, 200, "an authorised scrape with the strangers' connections held");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    sampling = false;
    await flood?.stop();
    client.close();
    await hub.kill();
    await dir.remove();
  }
});

Deno.test("Ports bound to 127.0.0.1 answer 421 to Host evil.example and serve Host 127.0.0.1:PORT, localhost:PORT and [::1]:PORT; the liveness port keeps only the probes; a port bound to 0.0.0.0 takes any Host", async () => {
  const { hub, url } = startProtectedHub({
    clusters: ["prod"],
    secure: false,
    args: ["--namespace", IDLE_NAMESPACE],
  });
  const openPort = freePort();
  const open = HubProcess.start({
    clusters: ["prod"],
    args: ["--namespace", IDLE_NAMESPACE, "--metrics-bind-address", `0.0.0.0:${openPort}`, "--metrics-secure=false"],
  });
  try {
    await waitProbe(hub, (s) => s === 200, "ready");
    await waitProbe(open, (s) => s === 200, "ready");
    const admin = adminToken("prod");
    const live = `http://127.0.0.1:${hub.port}`;
    const port = new URL(url).port;
    for (const [base, token, p] of [[live, undefined, hub.port], [url, admin, port]] as const) {
      const path = token ? "/metrics" : "/healthz";
      const evil = await curl(`${base}${path}`, token, ["-H", "Host: evil.example"]);
      assert.equal(evil.status, 421, `${base}: Host evil.example`);
      assert.match(evil.body, /bound to loopback.*evil\.example/);
      assert.equal((await curl(`${base}${path}`, token, ["-H", `Host: evil.example:${p}`])).status, 421);
      for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`, "localhost"]) {
        assert.equal((await curl(`${base}${path}`, token, ["-H", `Host: ${host}`])).status, 200, `Host ${host}`);
      }
    }
    // A refused Host costs no review: the junk token below would otherwise be a 401.
    assert.equal((await curl(`${url}/metrics`, "junk", ["-H", "Host: evil.example"])).status, 421);

    // With a protected port, the liveness port serves the two probes and nothing else, however the path is spelled.
    for (const path of ["/status", "/metrics", "/status/", "/metrics?x=1", "/%73tatus", "//status", "/STATUS"]) {
      assert.equal((await curl(`${live}${path}`)).status, 404, `${path} on --liveness`);
    }
    assert.equal((await curl(`${live}/status`, undefined, ["-I"])).status, 404, "HEAD /status on --liveness");
    assert.equal((await curl(`${live}/readyz`)).status, 200);

    // Bound to 0.0.0.0 (a Service in front): any Host, still behind the reviews.
    const any = await curl(`http://127.0.0.1:${openPort}/metrics`, admin, ["-H", "Host: evil.example"]);
    assert.equal(any.status, 200);
    assert.equal(
      (await curl(`http://127.0.0.1:${openPort}/metrics`, undefined, ["-H", "Host: x.example"])).status,
      401,
    );
    for (const h of [hub, open]) assert.equal((await h.stop()).code, 0, h.tail());
  } finally {
    await hub.kill();
    await open.kill();
  }
});
