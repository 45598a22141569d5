// Unit tests for the watch loop, on virtual time with a scripted list/watch client.
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { Store } from "./store.ts";
import { TooLargeError, type WatchEvent } from "../../kube/mod.ts";
import { labelled, type ListWatchClient, Watcher } from "./watcher.ts";

const obj = (name: string, rv: string) => ({ metadata: { name, namespace: "ns", resourceVersion: rv } });

type Step =
  | { list: { items: unknown[]; rv: string } }
  | { listError: unknown }
  | { watch: WatchEvent[]; hang?: boolean; gapMs?: number }
  | { watchError: unknown; afterMs?: number };

/** Plays `steps` in order: each list/watch call takes the next step. */
class ScriptedClient implements ListWatchClient {
  calls: string[] = [];
  resets = 0;
  resetConnections() {
    this.resets++;
  }
  constructor(private steps: Step[], private clock: VirtualClock) {}
  #next(): Step {
    const s = this.steps.shift();
    if (!s) return { watch: [], hang: true };
    return s;
  }
  listPage() {
    this.calls.push("list");
    const s = this.#next();
    if ("listError" in s) return Promise.reject(s.listError);
    if (!("list" in s)) throw new Error(`script expected a list, got ${JSON.stringify(s)}`);
    return Promise.resolve({ items: s.list.items, resourceVersion: s.list.rv });
  }
  watch(
    _path: string,
    opts: { resourceVersion: string; signal?: AbortSignal; onOpen?: () => void },
  ): AsyncIterable<WatchEvent> {
    this.calls.push(`watch@${opts.resourceVersion}`);
    const s = this.#next();
    const signal = opts.signal;
    const clock = this.clock;
    return (async function* () {
      if ("watchError" in s) {
        // A server that takes a while to refuse (a TLS handshake that times out, a 429 after a slow start).
        if (s.afterMs) await clock.sleep(s.afterMs, signal);
        throw s.watchError;
      }
      if (!("watch" in s)) throw new Error("script expected a watch");
      opts.onOpen?.();
      for (const ev of s.watch) {
        if (s.gapMs) await clock.sleep(s.gapMs, signal);
        if (signal?.aborted) return;
        yield ev;
      }
      if (s.hang) {
        await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
      }
    })();
  }
}

function setup(steps: Step[], idleTimeoutMs = 90_000) {
  const clock = new VirtualClock(1_000_000);
  const client = new ScriptedClient(steps, clock);
  const store = new Store();
  const changes: string[] = [];
  /** Each changed key with the priority it was reported at. */
  const priorities: string[] = [];
  const watcher = new Watcher({
    path: "/apis/g/v1/things",
    client,
    store,
    onChange: (keys, priority) => {
      changes.push(...keys);
      priorities.push(...keys.map((k) => `${k}@${priority}`));
    },
    onSynced: () => changes.push(`(synced with ${store.size})`),
    clock,
    idleTimeoutMs,
    random: () => 0,
  });
  const stop = new AbortController();
  const done = watcher.start(stop.signal);
  return { clock, client, store, changes, priorities, watcher, stop, done };
}

Deno.test("Watcher lists, then watches from the list's resourceVersion; listed keys are low priority, watched live", async () => {
  const t = setup([{ list: { items: [obj("a", "5")], rv: "10" } }, {
    watch: [{ type: "ADDED", object: obj("b", "11") }],
    hang: true,
  }]);
  await t.clock.advance(10);
  assert.deepEqual(t.client.calls, ["list", "watch@10"]);
  assert.deepEqual(t.changes, ["(synced with 1)", "ns/a", "ns/b"]);
  assert.deepEqual(t.priorities, ["ns/a@low", "ns/b@live"]);
  const s = t.watcher.snapshot();
  assert.equal(s.phase, "watching");
  assert.equal(s.synced, true);
  assert.equal(s.resourceVersion, "11");
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher relists after an in-stream 410 ERROR event and reports the deletion made during the gap", async () => {
  const t = setup([
    { list: { items: [obj("a", "5"), obj("b", "6")], rv: "10" } },
    { watch: [{ type: "ERROR", object: { kind: "Status", code: 410, message: "too old resource version" } }] },
    { list: { items: [obj("a", "5")], rv: "20" } },
    { watch: [], hang: true },
  ]);
  await t.clock.advance(10);
  assert.deepEqual(t.client.calls, ["list", "watch@10", "list", "watch@20"]);
  assert.equal(t.store.get("ns/b"), undefined);
  assert.deepEqual(t.changes, ["(synced with 2)", "ns/a", "ns/b", "(synced with 1)", "ns/b"]);
  assert.deepEqual(t.priorities, ["ns/a@low", "ns/b@low", "ns/b@low"], "a relist's changes wait behind live ones");
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher relists when the watch request itself answers HTTP 410", async () => {
  const gone = Object.assign(new Error("410 Gone"), { status: 410 });
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watchError: gone },
    { list: { items: [obj("c", "30")], rv: "30" } },
    { watch: [], hang: true },
  ]);
  await t.clock.advance(10);
  assert.deepEqual(t.client.calls, ["list", "watch@10", "list", "watch@30"]);
  assert.equal(t.watcher.snapshot().relists, 2);
  // An empty list changes nothing, yet says the store is synced; so does every relist.
  assert.deepEqual(t.changes, ["(synced with 0)", "(synced with 1)", "ns/c"]);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher backs off exponentially on failures and never spins hot", async () => {
  const refused = () => Object.assign(new Error("connection refused"), { name: "TransportError" });
  const t = setup(Array.from({ length: 20 }, () => ({ listError: refused() })));
  // Over 60 virtual seconds: 0.8 + 1.6 + 3.2 + 6.4 + 12.8 + 25.6 s → 6 or 7 attempts, not thousands.
  await t.clock.advance(60_000);
  const attempts = t.client.calls.length;
  assert.ok(attempts >= 5 && attempts <= 8, `attempts in 60 s: ${attempts}`);
  assert.equal(t.watcher.snapshot().phase, "unreachable");
  assert.match(t.watcher.snapshot().lastError ?? "", /connection refused/);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher maps 401, 403 and 404 to unauthorized, forbidden and missing-crd", async () => {
  for (const [status, phase] of [[401, "unauthorized"], [403, "forbidden"], [404, "missing-crd"]] as const) {
    const t = setup([{ listError: Object.assign(new Error(`HTTP ${status}`), { status }) }]);
    await t.clock.advance(10);
    assert.equal(t.watcher.snapshot().phase, phase);
    t.stop.abort();
    await t.done;
  }
});

Deno.test("Watcher's inactivity watchdog reopens a silent stream from the last resourceVersion", async () => {
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watch: [{ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }], hang: true },
    { watch: [], hang: true },
  ], 5_000);
  await t.clock.advance(10);
  assert.deepEqual(t.client.calls, ["list", "watch@10"]);
  await t.clock.advance(7_000);
  await t.clock.advance(2_000); // backoff after the stall
  assert.deepEqual(t.client.calls, ["list", "watch@10", "watch@15"]);
  assert.equal(t.watcher.snapshot().watchdogAborts, 1);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher's watchdog fires exactly idleTimeoutMs after the last event, never before", async () => {
  const bookmark = (rv: string) => ({ type: "BOOKMARK" as const, object: { metadata: { resourceVersion: rv } } });
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watch: [bookmark("15"), bookmark("16")], gapMs: 3_000, hang: true },
    { watch: [], hang: true },
  ], 5_000);
  await t.clock.advance(10);
  await t.clock.advance(6_000); // bookmarks at +3 s and +6 s: the quiet spell starts again at each
  await t.clock.advance(4_900);
  assert.deepEqual(t.client.calls, ["list", "watch@10"], "4.9 s after the last bookmark the stream is still trusted");
  assert.equal(t.watcher.snapshot().watchdogAborts, 0);
  await t.clock.advance(200);
  assert.equal(t.watcher.snapshot().watchdogAborts, 1, "5 s after the last bookmark the watchdog fired");
  await t.clock.advance(2_000); // backoff after the stall
  assert.deepEqual(t.client.calls, ["list", "watch@10", "watch@16"]);
  assert.ok(t.clock.pending <= 2, `one watchdog and at most one other timer pending, not ${t.clock.pending}`);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher.start() settles after abort and leaves no timer behind", async () => {
  const t = setup([{ list: { items: [], rv: "1" } }, { watch: [], hang: true }]);
  await t.clock.advance(10);
  t.stop.abort();
  await t.done;
  await t.clock.advance(0);
  assert.equal(t.clock.pending, 0);
});

Deno.test("Watcher does not report watching while a reconnect after a failure is still in flight", async () => {
  const refused = () => Object.assign(new Error("tls handshake eof"), { name: "TransportError" });
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watchError: refused() },
    { watchError: refused(), afterMs: 5_000 },
    { watch: [], hang: true },
  ]);
  await t.clock.advance(10);
  assert.equal(t.watcher.snapshot().phase, "unreachable");
  await t.clock.advance(1_000); // 800 ms backoff, then a reconnect that takes 5 s to fail
  assert.deepEqual(t.client.calls, ["list", "watch@10", "watch@10"]);
  assert.equal(t.watcher.snapshot().phase, "unreachable", "not watching before the server accepted the watch");
  assert.notEqual(t.watcher.snapshot().lastError, null);
  await t.clock.advance(5_000 + 2_000); // the failure, 1.6 s backoff, then a watch the server accepts
  assert.deepEqual(t.client.calls, ["list", "watch@10", "watch@10", "watch@10"]);
  assert.equal(t.watcher.snapshot().phase, "watching");
  assert.equal(t.watcher.snapshot().lastError, null);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher honours a 429's Retry-After instead of its grown backoff, so a restarted apiserver is not left idle", async () => {
  const refused = () => Object.assign(new Error("connection refused"), { name: "TransportError" });
  const initializing = Object.assign(new Error("429 Too Many Requests: storage is (re)initializing"), {
    status: 429,
    retryAfterSeconds: 1,
  });
  const t = setup([
    { list: { items: [], rv: "10" } },
    ...Array.from({ length: 5 }, () => ({ watchError: refused() })),
    { watchError: initializing },
    { watch: [], hang: true },
  ]);
  // 0.8 + 1.6 + 3.2 + 6.4 + 12.8 s of backoff after five refusals: the 429 arrives at about 24.8 s.
  await t.clock.advance(24_900);
  assert.equal(t.client.calls.length, 7, t.client.calls.join(","));
  // The exponential step would now be 25.6 s; Retry-After says 1 s.
  await t.clock.advance(1_100);
  assert.equal(t.client.calls.length, 8, t.client.calls.join(","));
  assert.equal(t.watcher.snapshot().phase, "watching");
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher's watchdog makes the client drop its connection before reconnecting, since a silent one may be half-open", async () => {
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watch: [], hang: true },
    { watch: [], hang: true },
  ], 5_000);
  await t.clock.advance(10);
  assert.equal(t.client.resets, 0);
  await t.clock.advance(6_500);
  assert.equal(t.client.resets, 1, "connections reset when the watchdog fired");
  assert.equal(t.watcher.snapshot().watchdogAborts, 1);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher keeps a quiet stream while its client confirms the connection alive (an HTTP/2 PING), and reopens it once it does not", async () => {
  const t = setup([
    { list: { items: [], rv: "10" } },
    { watch: [], hang: true },
    { watch: [], hang: true },
  ], 5_000);
  let alive = true;
  const asked: number[] = [];
  (t.client as ListWatchClient).confirmAlive = (quietMs, timeoutMs) => {
    asked.push(quietMs, timeoutMs);
    return Promise.resolve(alive);
  };
  await t.clock.advance(10);
  await t.clock.advance(11_000); // two quiet spells, each confirmed
  assert.deepEqual(asked.slice(0, 2), [5_000, 2_500], "asked after the idle timeout, the PING bounded by half of it");
  assert.equal(asked.length, 4, "asked once per quiet spell");
  assert.deepEqual(t.client.calls, ["list", "watch@10"], "the quiet stream was kept");
  assert.equal(t.watcher.snapshot().watchdogAborts, 0);
  assert.equal(t.client.resets, 0);
  alive = false;
  await t.clock.advance(5_000);
  assert.equal(t.watcher.snapshot().watchdogAborts, 1, "no PING answer: stalled");
  assert.equal(t.client.resets, 1, "connections reset before the reopen");
  await t.clock.advance(2_000); // backoff after the stall
  assert.deepEqual(t.client.calls, ["list", "watch@10", "watch@10"]);
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher shows credentials that cannot be obtained (an AuthError from a failing exec plugin) as unauthorized", async () => {
  const noCredentials = Object.assign(new Error('exec credential plugin "x" failed'), { name: "AuthError" });
  const t = setup([{ listError: noCredentials }]);
  await t.clock.advance(10);
  assert.equal(t.watcher.snapshot().phase, "unauthorized");
  assert.match(t.watcher.snapshot().lastError ?? "", /exec credential plugin "x" failed/);
  t.stop.abort();
  await t.done;
});

Deno.test("labelled() adds the label selector to every list and watch, keeping the caller's other options", async () => {
  const seen: unknown[] = [];
  let resets = 0;
  const client = labelled({
    listPage: (path, options) => {
      seen.push({ path, ...options });
      return Promise.resolve({ items: [], resourceVersion: "7" });
    },
    watch: async function* (path, options) {
      seen.push({ path, ...options });
      yield* [];
    },
    resetConnections: () => void resets++,
  }, "role=peer");
  await client.listPage("/x", { limit: 5 });
  for await (const _ of client.watch("/x", { resourceVersion: "7", timeoutSeconds: 1 })) { /* none */ }
  client.resetConnections?.();
  assert.deepEqual(seen, [
    { path: "/x", limit: 5, labelSelector: "role=peer" },
    { path: "/x", resourceVersion: "7", timeoutSeconds: 1, labelSelector: "role=peer" },
  ]);
  assert.equal(resets, 1);
});

const tooLarge = (what: string) =>
  new TooLargeError(`GET /apis/g/v1/things: refused a ${what} of more than 64 bytes`, 64, undefined);

/** A collection of `n` objects served in pages, refusing (TooLargeError) any page of more than `maxPage` objects. */
class SizedCollection implements ListWatchClient {
  pages: string[] = [];
  watches: string[] = [];
  constructor(private n: number, private maxPage: number, private watchFailures: number) {}
  listPage(_path: string, o: { limit?: number; continueToken?: string }) {
    const from = Number(o.continueToken ?? 0);
    const limit = o.limit ?? 500;
    this.pages.push(`${from}+${limit}`);
    if (Math.min(limit, this.n - from) > this.maxPage) return Promise.reject(tooLarge("response body"));
    const to = Math.min(this.n, from + limit);
    const items = Array.from({ length: to - from }, (_, i) => obj(`o${from + i}`, "5"));
    return Promise.resolve({ items, resourceVersion: "10", continueToken: to < this.n ? String(to) : undefined });
  }
  watch(_path: string, o: { resourceVersion: string; signal?: AbortSignal }): AsyncIterable<WatchEvent> {
    this.watches.push(o.resourceVersion);
    const fail = this.watchFailures-- > 0;
    const signal = o.signal;
    return (async function* () {
      if (fail) throw tooLarge("watch event");
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
      yield* [];
    })();
  }
}

function sized(client: SizedCollection) {
  const clock = new VirtualClock(1_000_000);
  const store = new Store();
  const watcher = new Watcher({ path: "/apis/g/v1/things", client, store, onChange: () => {}, clock, random: () => 0 });
  const stop = new AbortController();
  return { clock, store, watcher, stop, done: watcher.start(stop.signal) };
}

Deno.test("Watcher asks for half as many objects when a list page is too large, and lists the whole collection", async () => {
  const client = new SizedCollection(1000, 100, 0);
  const t = sized(client);
  await t.clock.advance(10);
  assert.equal(t.store.size, 1000);
  assert.deepEqual(client.pages.slice(0, 4), ["0+500", "0+250", "0+125", "0+62"]);
  assert.ok(client.pages.slice(4).every((p) => p.endsWith("+62")), "the smaller pages serve the rest of the relist");
  assert.equal(t.watcher.snapshot().phase, "watching");
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher puts a single object over the limit in the too-large state, naming it, and relists after a backoff", async () => {
  const client = new SizedCollection(3, 0, 0);
  const t = sized(client);
  await t.clock.advance(10);
  const s = t.watcher.snapshot();
  assert.equal(s.phase, "too-large");
  assert.match(s.lastError ?? "", /refused a response body of more than 64 bytes/);
  assert.deepEqual(client.pages, ["0+500", "0+250", "0+125", "0+62", "0+31", "0+15", "0+7", "0+3", "0+1"]);
  await t.clock.advance(700);
  assert.equal(client.pages.length, 9, "no new list before the backoff's 800 ms");
  await t.clock.advance(200);
  assert.equal(client.pages.length, 18, "one more relist after the backoff");
  t.stop.abort();
  await t.done;
});

Deno.test("Watcher relists (not resumes) after a watch event over the limit, and watches again", async () => {
  const client = new SizedCollection(2, 500, 1);
  const t = sized(client);
  await t.clock.advance(10);
  assert.equal(t.watcher.snapshot().phase, "too-large");
  assert.match(t.watcher.snapshot().lastError ?? "", /refused a watch event of more than 64 bytes/);
  await t.clock.advance(1000);
  assert.deepEqual(client.pages, ["0+500", "0+500"], "the event's resourceVersion would bring it back: list afresh");
  assert.deepEqual(client.watches, ["10", "10"]);
  assert.equal(t.watcher.snapshot().phase, "watching");
  assert.equal(t.watcher.snapshot().relists, 2);
  t.stop.abort();
  await t.done;
});
