// Unit tests of the first contact on virtual time: TCP probe first, one request per backoff step, one log line.
import assert from "node:assert/strict";
import { type ClusterAccess, type FetchLike, KubeClient } from "../../kube/mod.ts";
import type { WatchPhase } from "../../runtime/mod.ts";
import { flushMicrotasks, LogBurst, Logger, VirtualClock } from "../../util/mod.ts";
import { reach, type ReachContext, type TcpConnect } from "./_reach.ts";

const access: ClusterAccess = {
  name: "c",
  server: "https://10.0.0.1:6443",
  source: "test",
  auth: () => Promise.resolve({ headers: { Authorization: "Bearer t" }, insecureSkipTlsVerify: false }),
};

function setup(connect: TcpConnect, fetch: FetchLike) {
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const states: [WatchPhase, string | null][] = [];
  const client = new KubeClient(access, { fetch, clock });
  const ctx: ReachContext = {
    client,
    server: access.server,
    connect,
    clock,
    log: new Logger({ level: "debug", format: "json", write: (l) => lines.push(JSON.parse(l)) }),
    onState: (state, error) => states.push([state, error]),
  };
  return { clock, lines, states, ctx, client };
}

Deno.test("reach() tries a refused server once per backoff step with no request sent, and logs it once at warn", async () => {
  const probes: string[] = [];
  let requests = 0;
  const { clock, lines, states, ctx, client } = setup(
    (h, p) => {
      probes.push(`${h}:${p}`);
      return Promise.reject(new Error("Connection refused (os error 111)"));
    },
    () => {
      requests++;
      return Promise.resolve(new Response("{}"));
    },
  );
  const stop = new AbortController();
  const done = reach(ctx, stop.signal);
  for (let s = 0; s < 60; s++) await clock.advance(1000);
  assert.equal(requests, 0, "no HTTP request (and no TLS connection) to a server that refuses TCP");
  assert.ok(probes.length >= 4 && probes.length <= 9, `one probe per backoff step over 60 s: ${probes.length}`);
  assert.deepEqual(probes[0], "10.0.0.1:6443");
  assert.deepEqual(states.at(-1)?.[0], "unreachable");
  assert.match(states.at(-1)?.[1] ?? "", /cannot connect to 10\.0\.0\.1:6443: Connection refused/);
  assert.equal(lines.filter((l) => l.level === "warn").length, 1, "one warn line while the error stays the same");
  assert.equal(lines.filter((l) => l.level === "debug").length, probes.length - 1);
  stop.abort();
  await clock.advance(30_000);
  assert.equal(await done, false);
  client.close();
});

Deno.test("reach() is done once the server answers with any HTTP status, a 401 included", async () => {
  const { clock, states, ctx, client } = setup(
    () => Promise.resolve({ close() {} }),
    () => Promise.resolve(new Response('{"kind":"Status","code":401}', { status: 401 })),
  );
  const done = reach(ctx, new AbortController().signal);
  await clock.advance(0);
  assert.equal(await done, true);
  assert.deepEqual(states.at(-1), ["connecting", null]);
  client.close();
});

Deno.test("reach() gives a TCP connect that hangs up to its timeout, then backs off, and closes a late connection", async () => {
  let closed = 0;
  let resolveLate: ((c: { close(): void }) => void) | undefined;
  const { clock, states, ctx, client } = setup(
    () => new Promise((r) => (resolveLate = r)),
    () => Promise.reject(new Error("not reached")),
  );
  const stop = new AbortController();
  const done = reach({ ...ctx, connectTimeoutMs: 5000 }, stop.signal);
  await clock.advance(5000);
  assert.match(states.at(-1)?.[1] ?? "", /timed out after 5000 ms/);
  resolveLate!({ close: () => closed++ });
  await flushMicrotasks();
  assert.equal(closed, 1);
  stop.abort();
  await clock.advance(60_000);
  assert.equal(await done, false);
  client.close();
});

Deno.test("reach() of 100 clusters refused at once writes their first failures through one shared summary: 6 lines, not 100", async () => {
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const shared = new Logger({ level: "warn", format: "json", write: (l) => lines.push(JSON.parse(l)) });
  const burst = new LogBurst({ logger: shared, level: "warn", msg: "cluster not reachable", clock });
  const stop = new AbortController();
  const clients: KubeClient[] = [];
  const runs = Array.from({ length: 100 }, (_, i) => {
    const client = new KubeClient(access, { fetch: () => Promise.reject(new Error("not reached")), clock });
    clients.push(client);
    return reach({
      client,
      server: access.server,
      connect: () => Promise.reject(new Error("Connection refused (os error 111)")),
      clock,
      log: shared,
      summary: { burst, cluster: `c${i}` },
      onState: () => {},
    }, stop.signal);
  });
  await clock.advance(10_000);
  const warns = lines.filter((l) => l.msg === "cluster not reachable");
  assert.equal(warns.length, 6, "5 in full, then one summary");
  assert.equal(warns[5].suppressed, 95);
  assert.deepEqual(warns.slice(0, 5).map((l) => l.cluster), ["c0", "c1", "c2", "c3", "c4"]);
  stop.abort();
  await clock.advance(60_000);
  await Promise.all(runs);
  for (const c of clients) c.close();
});
