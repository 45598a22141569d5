// Unit tests of /status over many clusters: pages by name, every per-cluster map cut to the page, a summary of all.
import assert from "node:assert/strict";
import type { ClusterHealth } from "./cluster_health.ts";
import type { HubHealth } from "../hub.ts";
import { notEngagedHealth } from "./hub_health.ts";
import {
  pagedStatus,
  parseStatusQuery,
  STATUS_DEFAULT_LIMIT,
  STATUS_MAX_LIMIT,
  STATUS_MAX_LISTED,
  StatusQueryError,
} from "./status_view.ts";

function entry(over: Partial<ClusterHealth> = {}): ClusterHealth {
  return { ...notEngagedHealth(["uuid"], null), state: "watching", synced: true, ...over };
}

/** `n` Secret clusters `s-00000`… unreachable, plus prod from the command line. */
function doc(n: number): HubHealth & { reconcileHistory: { stepSeconds: number; clusters: Record<string, number[]> } } {
  const clusters: Record<string, ClusterHealth> = { prod: entry({ provider: "flag", gatesReadiness: true }) };
  const history: Record<string, number[]> = { prod: [1] };
  const admission: Record<string, unknown> = { prod: { configurations: 2 } };
  const owners: Record<string, string | null> = { prod: "me", "zz-elsewhere": "peer" };
  for (let i = 0; i < n; i++) {
    const name = `s-${String(i).padStart(5, "0")}`;
    clusters[name] = entry({ state: "unreachable", synced: false, provider: "secret", gatesReadiness: false });
    history[name] = [0];
    admission[name] = { configurations: 0 };
    owners[name] = "me";
  }
  return {
    status: "degraded",
    ready: true,
    clusters,
    controller: { inFlight: 0, queued: 0, wedged: false },
    admission: { port: 8443, clusters: admission },
    shard: { identity: "me", clusters: owners },
    reconcileHistory: { stepSeconds: 5, clusters: history },
  };
}

const q = (s: string) => parseStatusQuery(new URLSearchParams(s));

Deno.test("parseStatusQuery() reads limit, continue and cluster, defaulting to the first STATUS_DEFAULT_LIMIT clusters", () => {
  assert.deepEqual(q(""), { limit: STATUS_DEFAULT_LIMIT });
  assert.deepEqual(q("limit=20&cluster=a&cluster=b"), { limit: 20, names: ["a", "b"] });
  assert.equal(q(`limit=${STATUS_MAX_LIMIT}`).limit, STATUS_MAX_LIMIT);
  for (
    const bad of [
      "limit=0",
      "limit=-1",
      "limit=1.5",
      "limit=x",
      `limit=${STATUS_MAX_LIMIT + 1}`,
      "continue=%%",
      "continue=a+b",
    ]
  ) {
    assert.throws(() => q(bad), (e: Error) => e instanceof StatusQueryError && !e.message.includes("\n"), bad);
  }
  assert.throws(() => q(Array.from({ length: 101 }, (_, i) => `cluster=c${i}`).join("&")), StatusQueryError);
});

Deno.test("pagedStatus() walks every cluster once, page by page, in name order, with a summary of all on each page", () => {
  const d = doc(1234);
  const seen: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = pagedStatus(d, q(`limit=500${token ? `&continue=${token}` : ""}`));
    pages++;
    const names = Object.keys(page.clusters);
    assert.ok(names.length <= 500);
    seen.push(...names);
    assert.deepEqual(page.summary, {
      clusters: 1235,
      listed: names.length,
      states: { watching: 1, unreachable: 1234 },
      providers: { flag: 1, secret: 1234 },
      gatingReadiness: 1,
      notReady: 0,
    });
    // Every per-cluster map holds exactly the page's range.
    assert.deepEqual(Object.keys(page.reconcileHistory!.clusters).sort(), [...names].sort());
    assert.deepEqual(
      Object.keys((page.admission as { clusters: Record<string, unknown> }).clusters).sort(),
      [...names].sort(),
    );
    token = page.continue;
  } while (token);
  assert.equal(pages, 3);
  assert.deepEqual(seen, Object.keys(d.clusters).sort());
});

Deno.test("pagedStatus() keeps shard owners of clusters engaged elsewhere on the page whose range holds their names", () => {
  const d = doc(3);
  const first = pagedStatus(d, q("limit=2"));
  assert.deepEqual(Object.keys(first.clusters), ["prod", "s-00000"]);
  assert.deepEqual(Object.keys(first.shard!.clusters).sort(), ["prod", "s-00000"]);
  const last = pagedStatus(d, q(`limit=2&continue=${first.continue}`));
  assert.equal(last.continue, undefined);
  assert.deepEqual(Object.keys(last.shard!.clusters).sort(), ["s-00001", "s-00002", "zz-elsewhere"]);
});

Deno.test("pagedStatus() answers one cluster for ?cluster=NAME, and an empty page for an unknown one, with the summary", () => {
  const d = doc(10);
  const one = pagedStatus(d, q("cluster=s-00007"));
  assert.deepEqual(Object.keys(one.clusters), ["s-00007"]);
  assert.deepEqual(Object.keys(one.reconcileHistory!.clusters), ["s-00007"]);
  assert.equal(one.continue, undefined);
  assert.equal(one.summary.clusters, 11);
  const none = pagedStatus(d, q("cluster=nope"));
  assert.deepEqual(none.clusters, {});
  assert.equal(none.summary.listed, 0);
});

Deno.test("pagedStatus() answers a few hundred kilobytes for 10,000 clusters by default instead of every entry", () => {
  const d = doc(10_000);
  const all = new TextEncoder().encode(JSON.stringify(d)).byteLength;
  const page = new TextEncoder().encode(JSON.stringify(pagedStatus(d, q("")))).byteLength;
  assert.ok(page * 10 < all, `${page} bytes of ${all}`);
  assert.equal(Object.keys(pagedStatus(d, q("")).clusters).length, STATUS_DEFAULT_LIMIT);
});

Deno.test("pagedStatus() lists notReady and each provider's errors up to the page's limit, at least STATUS_MAX_LISTED, and counts the rest", () => {
  const d = doc(0);
  const notReady = Array.from({ length: 300 }, (_, i) => `c${i}`);
  const errors = Array.from({ length: 250 }, (_, i) => ({ source: `ns/s${i}`, error: "no kubeconfig key" }));
  const withLists: HubHealth = {
    ...d,
    notReady,
    providers: {
      secret: { state: "watching", synced: true, watches: ["prod:ns"], clusters: 0, lastError: null, errors },
    },
  };
  const small = pagedStatus<HubHealth>(withLists, q("limit=10"));
  assert.equal(small.notReady!.length, STATUS_MAX_LISTED);
  assert.equal(small.summary.notReady, 300);
  assert.equal(small.providers!.secret.errors.length, STATUS_MAX_LISTED);
  assert.equal(small.providers!.secret.errorsOmitted, 150);
  const large = pagedStatus<HubHealth>(withLists, q("limit=5000"));
  assert.equal(large.notReady!.length, 300);
  assert.equal(large.providers!.secret.errors.length, 250);
  assert.equal(large.providers!.secret.errorsOmitted, undefined);
});

Deno.test("pagedStatus() pages names with any characters through the continue token", () => {
  const d = doc(0);
  d.clusters = { "ä/ö": entry(), "a b": entry(), "<x>": entry(), "z": entry() };
  const seen: string[] = [];
  let token: string | undefined;
  do {
    const page = pagedStatus(d, q(`limit=1${token ? `&continue=${token}` : ""}`));
    seen.push(...Object.keys(page.clusters));
    token = page.continue;
    if (token) assert.match(token, /^[A-Za-z0-9_-]+$/);
  } while (token);
  assert.deepEqual(seen, ["<x>", "a b", "z", "ä/ö"]);
});
