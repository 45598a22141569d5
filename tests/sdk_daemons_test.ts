// End-to-end: a defineHandlers daemon and index on the real local clusters, and the daemon's shard handoff between
// two --shard replicas (its runs recorded in ConfigMaps by the daemon itself, read here from the apiserver).
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub is checked by the test itself.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const FILE = "tests/fixtures/daemon_index_operator.ts";
/** Short Leases, as tests/production/shard_test.ts. */
const TIMINGS = ["--shard-lease-duration", "6", "--shard-renew-deadline", "4", "--shard-renew-period", "1"];

interface Run {
  pid: number;
  start: number;
  last: number;
}

/** A run as the recorder saw it: its pid, first and last report, and whether it reported its stop. */
interface Reported {
  run: string;
  pid: number;
  start: number;
  end: number;
  stopped: boolean;
}

/** A local HTTP server the daemons POST their start, heartbeats and stop to (independent of the clusters). */
function recorder() {
  const events: { run: string; pid: number; event: string; t: number }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    events.push(await req.json());
    return new Response("ok");
  });
  const runs = (): Reported[] => {
    const by = new Map<string, Reported>();
    for (const e of events) {
      const r = by.get(e.run) ?? { run: e.run, pid: e.pid, start: e.t, end: e.t, stopped: false };
      r.start = Math.min(r.start, e.t);
      r.end = Math.max(r.end, e.t);
      r.stopped ||= e.event === "stop";
      by.set(e.run, r);
    }
    return [...by.values()].sort((a, b) => a.start - b.start);
  };
  return { url: `http://127.0.0.1:${server.addr.port}/`, runs, close: () => server.shutdown() };
}

Deno.test("A daemon runs once per object and moves with its cluster on a shard handoff, never on two replicas at once; an index spans every engaged cluster", async () => {
  const ns = await testNamespace("daemons", { contexts: CLUSTERS });
  const apis = Object.fromEntries(CLUSTERS.map((c) => [c, localApi(c)]));
  const group = `dmn-${crypto.randomUUID().slice(0, 8)}`;
  const args = [
    "--operators",
    "none",
    "--namespace",
    ns.name,
    "--shard",
    "--shard-id",
    group,
    "--leader-elect-namespace",
    ns.name,
    ...TIMINGS,
    FILE,
  ];
  const uuid = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: "demo.operator/v1",
    kind: "Uuid",
    metadata: { name, namespace: ns.name },
    spec,
  });
  const create = (cluster: string, name: string, spec: Record<string, unknown>) =>
    apis[cluster].request("POST", `/apis/demo.operator/v1/namespaces/${ns.name}/uuid`, uuid(name, spec));
  const message = async (cluster: string, name: string) =>
    (await apis[cluster].getUuid(ns.name, name).catch(() => undefined))?.status?.message;
  const runs = async (): Promise<Run[]> =>
    ((await apis.dev.request("GET", `/api/v1/namespaces/${ns.name}/configmaps?labelSelector=daemon-run%3Dd`))
      .items as any[]).map((c) => ({ pid: Number(c.data.pid), start: Number(c.data.start), last: Number(c.data.last) }))
      .sort((a, b) => a.start - b.start);
  const rec = recorder();
  const env = { DAEMON_RECORDER_URL: rec.url };
  const a = HubProcess.start({ clusters: CLUSTERS, args, env });
  let b: HubProcess | undefined;
  try {
    await a.waitStatus((s) => CLUSTERS.every((c) => s.clusters?.[c]?.state === "watching"), 60_000, "A owns all");

    // The index: team members in prod and staging, read by a handler in dev.
    await Promise.all([create("prod", "blue-1", { team: "blue" }), create("staging", "blue-2", { team: "blue" })]);
    await create("staging", "red-1", { team: "red" });
    await create("dev", "probe-1", { probe: "blue" });
    assert.equal(
      await waitFor(() => message("dev", "probe-1"), "the probe's create handler ran"),
      "prod/blue-1,staging/blue-2",
      "the index holds both clusters' members, and not the red one",
    );
    await apis.prod.deleteUuid(ns.name, "blue-1");
    // The deletion reaches the index through prod's watch; a probe created after it sees one member.
    await new Promise((r) => setTimeout(r, 500));
    await create("dev", "probe-2", { probe: "blue" });
    assert.equal(await waitFor(() => message("dev", "probe-2"), "the second probe ran"), "staging/blue-2");

    // The daemon: one run, by A, heartbeating.
    await create("dev", "d", { daemon: true });
    await waitFor(
      async () => (await runs()).length === 1 && (await runs())[0].last > (await runs())[0].start,
      "the daemon's first run heartbeats",
    );
    assert.equal((await runs())[0].pid, a.pid, "A runs it");
    await new Promise((r) => setTimeout(r, 600));
    assert.equal((await runs()).length, 1, "reconciles and watch events start no second run");

    // B joins; then A leaves (SIGTERM): every cluster, dev included, is handed to B, and the daemon with it.
    b = HubProcess.start({ clusters: CLUSTERS, args, env });
    await b.waitStatus((s) => s.shard?.peers?.filter((p: any) => p.live).length === 2, 60_000, "two live peers");
    const handoffAt = Date.now();
    assert.equal((await a.stop("SIGTERM")).code, 0, a.tail());
    await b.waitStatus((s) => CLUSTERS.every((c) => s.clusters?.[c]?.state === "watching"), 60_000, "B owns all");
    const moved = await waitFor(async () => {
      const rs = await runs();
      return rs.some((r) => r.pid === b!.pid && r.last > r.start) && rs;
    }, "the daemon runs on B (its ConfigMap heartbeats)");
    // What the daemons reported themselves, A's cleanup after its signal included (its cluster client was closed).
    const reported = rec.runs().filter((r) => moved.some((m) => r.pid === m.pid));
    const rel = (t: number) => t - handoffAt;
    console.log(
      `daemon runs of d: ${
        reported.map((r) =>
          `${r.pid === a.pid ? "A" : "B"} ${rel(r.start)}..${rel(r.end)} ms${r.stopped ? " (stopped)" : ""}`
        ).join("; ")
      } (relative to A's SIGTERM)`,
    );
    assert.ok(moved.every((r) => r.pid === a.pid || r.pid === b!.pid), "only A and B ran it");
    assert.equal(moved.filter((r) => r.pid === b!.pid).length, 1, "one run on B");
    const fromA = reported.filter((r) => r.pid === a.pid);
    const onB = reported.find((r) => r.pid === b!.pid)!;
    assert.ok(fromA.length === 1 && fromA[0].stopped, `A's run reported its stop: ${JSON.stringify(fromA)}`);
    for (let i = 1; i < reported.length; i++) {
      assert.ok(
        reported[i].start >= reported[i - 1].end,
        `run ${i} started at ${rel(reported[i].start)} ms, before run ${i - 1} ended at ${
          rel(reported[i - 1].end)
        } ms: two at once`,
      );
    }
    assert.ok(onB.start >= fromA[0].end, "B started only after A's run ended");
    assert.ok(a.logs.some((l) => l.includes('"msg":"daemon run recorded"')), "A logged its run");

    // Deleting the object stops the daemon on B: its heartbeats stop.
    await apis.dev.deleteUuid(ns.name, "d");
    await waitFor(async () => !(await apis.dev.getUuid(ns.name, "d").catch(() => undefined)), "d gone");
    const atDelete = (await runs()).find((r) => r.pid === b!.pid)!.last;
    await waitFor(
      () => rec.runs().find((r) => r.pid === b!.pid)?.stopped,
      "B's run reports its stop after the deletion",
    );
    const after = (await runs()).find((r) => r.pid === b!.pid)!.last;
    assert.ok(after - atDelete <= 250, `ConfigMap heartbeats after the deletion: ${after - atDelete} ms more`);
    assert.equal((await b.stop("SIGTERM")).code, 0, b.tail());
  } finally {
    await a.kill();
    await b?.kill();
    Object.values(apis).forEach((x) => x.close());
    await rec.close();
    await ns.cleanup();
  }
});
