// A registered cluster whose server streams 512 MiB without a newline (in a watch, or as a list body) cannot grow
// the hub past --max-object-bytes plus a few MiB: that cluster turns `too-large`, and prod and staging keep serving.
//
// The attacker is an intercepting proxy in front of the local dev apiserver (so discovery, pre-flight and the first
// list are real), whose hook answers the hub's Uuid watch or list with an endless body once the attack starts.

import assert from "node:assert/strict";
import { localApi, names, waitAllAssigned, waitFor } from "../../dev/support/cluster_api.ts";
import { finishHub, recordFigure, startHub, waitStatus } from "../support/fault_harness.ts";
import type { InterceptedRequest } from "../support/intercept_proxy.ts";
import { statusResponse } from "../support/intercept_proxy.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "../support/local_proxy.ts";
import { adminToken } from "../../dev/support/local_clusters.ts";
import { testNamespace } from "../../dev/support/namespace.ts";

const MiB = 1024 * 1024;
/** The hub's default --max-object-bytes (DEFAULT_MAX_OBJECT_BYTES), which these hubs run with. */
const CAP = 4 * MiB;
/**
 * What the hub may grow beyond the cap while attacked: the cap's buffer grows by doubling once (its smaller steps are
 * garbage until V8 collects them), plus TLS sockets, V8 heap slack and the reconciles of prod and staging meanwhile.
 * Reads and watches of a hub past MULTIPLEX_FROM clusters are streams of one HTTP/2 connection (node:http2), whose chunks arrive as
 * fresh Buffers, garbage until V8 collects them (about the cap per refused request), where our HTTP/1.1 sockets read
 * into one buffer of their own; V8 collects external memory like that only once tens of MiB of it piled up. Measured
 * (see the figures these tests print): 12.7–17.0 MiB of growth in all on HTTP/1.1, 14.8–29.8 MiB on HTTP/2 streams
 * (the list case refuses nine pages, about 39 MiB read in all; on a loaded machine V8 may collect none of them before
 * the last, 44.3 and 47.2 MiB of growth in two such runs). So the slack is what nine refused pages can leave
 * uncollected at once (about 39 MiB) plus 17 MiB for the rest above. Without the cap the same attacks grew the hub by
 * 1,455–1,711 MiB, 26 times this bound.
 */
const SLACK = 56 * MiB;
/** What the attacker is ready to send per request. */
const ATTACK_BYTES = 512 * MiB;
/** Hang guard: the attack phase ends here at the latest (on the fixed hub it ends within a few seconds). */
const ATTACK_GUARD_MS = 90_000;

/** A hub's resident set, bytes, from /proc. */
async function rssOf(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = status.match(/^VmRSS:\s+(\d+) kB$/m);
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

/** Counts what the attacker sent; `body(prefix)` is an endless (512 MiB) chunked body that starts like JSON. */
class Attacker {
  requests = 0;
  sent = 0;
  body(prefix: string): Response {
    this.requests++;
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    let left = ATTACK_BYTES;
    let first = true;
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => {
        const piece = first ? new TextEncoder().encode(prefix) : chunk.subarray(0, Math.min(chunk.length, left));
        first = false;
        left -= piece.length;
        this.sent += piece.length;
        c.enqueue(piece);
        if (left <= 0) c.close();
      },
    });
    return new Response(stream, { status: 200, headers: { "Content-Type": "application/json" } });
  }
}

const isUuidCollection = (r: InterceptedRequest) => r.method === "GET" && /\/namespaces\/[^/]+\/uuid$/.test(r.path);
const isWatch = (r: InterceptedRequest) => r.query.get("watch") === "true";

/**
 * Runs the hub on prod, staging and `evil` (dev behind the attacker), waits until it is ready, measures its RSS, then
 * starts the attack (`start`) and samples RSS until evil shows `too-large` and Uuids created in prod and staging
 * during the attack got their UUIDs, or the guard ends it.
 */
async function underAttack(
  label: string,
  attack: (attacker: Attacker, on: { value: boolean }) => (r: InterceptedRequest) => Response | undefined,
  start: (proxy: { cutStreams(): number }) => void,
) {
  await using ns = await testNamespace(label);
  await using proxy = await proxyInFrontOf("dev");
  const attacker = new Attacker();
  const on = { value: false };
  proxy.hook = attack(attacker, on);
  const dir = await Deno.makeTempDir({ prefix: `hub-${label}-` });
  const kubeconfig = `${dir}/evil.yaml`;
  await Deno.writeTextFile(kubeconfig, adminKubeconfigVia("dev", proxy.url, "evil"), { mode: 0o600 });
  const hub = startHub(["prod", "staging", "evil"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns.name],
    args: ["--operators", "uuid"],
  });
  try {
    await hub.waitReady(60_000);
    // Warm-up: the same work the hub does during the attack (Uuids in prod and staging), so its first-use costs (code,
    // buffers, connections) are in the baseline and the growth measured is the attack's.
    await Promise.all((["prod", "staging"] as const).map(async (c) => {
      const api = localApi(c);
      await api.createUuids(ns.name, names(`warm-${c[0]}`, 5));
      await waitAllAssigned(api, ns.name, 5);
    }));
    let before = 0;
    for (let i = 0; i < 20; i++) {
      before = Math.max(before, await rssOf(hub.pid));
      await new Promise((r) => setTimeout(r, 100));
    }
    on.value = true;
    start(proxy);
    const attackAt = performance.now();
    await waitFor(() => attacker.sent > 0, "the attack to start", 30_000, 50);
    const created = { prod: names("p", 5), staging: names("s", 5) };
    const assigned = Promise.all([
      localApi("prod").createUuids(ns.name, created.prod).then(() => waitAllAssigned(localApi("prod"), ns.name, 10)),
      localApi("staging").createUuids(ns.name, created.staging).then(() =>
        waitAllAssigned(localApi("staging"), ns.name, 10)
      ),
    ]);
    let servedMeanwhile = false;
    assigned.then(() => servedMeanwhile = true, () => {});
    let peak = before;
    let tooLarge = false;
    while (performance.now() - attackAt < ATTACK_GUARD_MS) {
      peak = Math.max(peak, await rssOf(hub.pid));
      if (!tooLarge) tooLarge = (await hub.get("/healthz")).body?.clusters?.evil?.state === "too-large";
      if (tooLarge && servedMeanwhile && attacker.requests >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const figure = {
      figure: `oversized_${label}`,
      rss_before_mib: +(before / MiB).toFixed(1),
      rss_peak_mib: +(peak / MiB).toFixed(1),
      growth_mib: +((peak - before) / MiB).toFixed(1),
      cap_mib: CAP / MiB,
      attack_requests: attacker.requests,
      attacker_sent_mib: +(attacker.sent / MiB).toFixed(1),
      seconds: +((performance.now() - attackAt) / 1000).toFixed(1),
    };
    await recordFigure(figure);
    assert.ok(
      peak - before <= CAP + SLACK,
      `the hub grew by ${figure.growth_mib} MiB under the attack (limit: cap ${CAP / MiB} MiB + ${SLACK / MiB} MiB)`,
    );
    assert.ok(tooLarge, "evil shows the too-large state in /healthz");
    await assigned; // prod and staging served their Uuids during the attack (it throws if they did not)
    const status = await waitStatus(hub, "evil too-large in /status", (s) => s.clusters.evil.state === "too-large");
    assert.equal(status.clusters.evil.operators.uuid.state, "too-large");
    assert.equal(status.clusters.prod.state, "watching");
    assert.equal(status.clusters.staging.state, "watching");
    return { status, attacker, ns: ns.name };
  } finally {
    on.value = false;
    await finishHub(hub, `oversized-${label}`, [adminToken("dev")]);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("A cluster whose watch streams 512 MiB without a newline turns too-large in /healthz and /status, the hub grows by at most the cap plus a bounded slack, and prod and staging keep serving", async () => {
  const { status, attacker, ns } = await underAttack(
    "watch",
    (a, on) => (r) =>
      on.value && isUuidCollection(r) && isWatch(r) ? a.body('{"type":"ADDED","object":{"x":"') : undefined,
    (proxy) => proxy.cutStreams(), // the hub watches again at once, into the attack
  );
  const lastError: string = status.clusters.evil.lastError;
  assert.match(lastError, new RegExp(`GET /apis/demo\\.operator/v1/namespaces/${ns}/uuid: refused a watch event`));
  assert.match(lastError, /of more than 4194304 bytes .*the limit is 4194304 bytes \(--max-object-bytes\)/);
  assert.ok(attacker.sent < attacker.requests * (CAP + 8 * MiB), `the hub read little beyond the cap per attack`);
});

Deno.test("A cluster whose list answers a 512 MiB body that never completes turns too-large, after asking for smaller pages, and the hub grows by at most the cap plus a bounded slack", async () => {
  let expired = false;
  const { status, attacker } = await underAttack(
    "list",
    (a, on) => (r) => {
      if (!on.value || !isUuidCollection(r)) return undefined;
      if (isWatch(r)) {
        if (expired) return undefined;
        expired = true; // one 410 makes the hub relist, into the attack
        return statusResponse(410, "Expired", "too old resource version");
      }
      return a.body('{"kind":"UuidList","apiVersion":"demo.operator/v1","metadata":{},"items":[{"x":"');
    },
    (proxy) => proxy.cutStreams(),
  );
  assert.match(status.clusters.evil.lastError, /refused a response body of more than 4194304 bytes/);
  assert.ok(attacker.requests >= 9, `the hub asked for smaller pages before giving up (${attacker.requests} lists)`);
});
