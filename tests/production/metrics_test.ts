// End-to-end: /metrics after a real run, parsed with a Prometheus text parser from npm, matches what happened.

import assert from "node:assert/strict";
import { localApi, UUID_V4, waitFor } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { requireClusters, testNamespace } from "../support/mod.ts";
import { metricSeries, metricSum, parseMetrics } from "../support/prometheus_text.ts";

const CLUSTERS = ["prod", "staging"];
const N = 25;

Deno.test("/metrics after creating Uuids in two clusters parses as Prometheus text and counts exactly the work done per cluster", async () => {
  requireClusters();
  const ns = await testNamespace("metrics", { contexts: CLUSTERS });
  const apis = CLUSTERS.map((c) => localApi(c));
  // Debug logs name every UUID this hub wrote, so its own writes can be told from those of any other hub that
  // may watch the same shared clusters (alone, as in CI, it writes all N).
  // The apiserver's own count of Uuid writes (PATCH/PUT, by answer) before the hub starts: every cluster is this
  // test's alone while it runs, so the difference afterwards is the hub's writes.
  const writesBefore = await Promise.all(
    apis.map(async (a) => ({ ok: await a.uuidWrites(true), all: await a.uuidWrites() })),
  );
  const hubStarted = Date.now();
  const hub = HubProcess.start({ clusters: CLUSTERS, args: ["--namespace", ns.name, "--log-level", "debug"] });
  try {
    await hub.waitReady();
    await Promise.all(apis.map((a) => a.createUuids(ns.name, Array.from({ length: N }, (_, i) => `m-${i}`))));
    for (const a of apis) {
      await waitFor(async () => {
        const m = await a.uuidsOf(ns.name);
        return [...m.values()].filter((u) => typeof u === "string" && UUID_V4.test(u)).length === N;
      }, `${N} Uuids assigned in ${a.ep.name}`);
    }
    // Let the status writes' own watch events come back and be reconciled as no-ops.
    await waitFor(async () => {
      const s = (await hub.get("/status")).body;
      return s.controller.queued === 0 && s.controller.inFlight === 0 &&
        CLUSTERS.every((c) => s.clusters[c].objects === N);
    }, "queue drained");
    await new Promise((r) => setTimeout(r, 1000));
    const written = new Map<string, Set<string>>(CLUSTERS.map((c) => [c, new Set()]));
    for (const line of hub.logs) {
      if (!line.includes('"uuid assigned"')) continue;
      const l = JSON.parse(line);
      if (l.namespace === ns.name) written.get(l.cluster)!.add(`${l.name}=${l.uuid}`);
    }
    const finals = await Promise.all(apis.map((a) => a.uuidsOf(ns.name)));
    const writesAfter = await Promise.all(
      apis.map(async (a) => ({ ok: await a.uuidWrites(true), all: await a.uuidWrites() })),
    );
    const res = await hub.get("/metrics");
    assert.equal(res.status, 200);
    const m = parseMetrics(res.text);
    for (const family of res.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      assert.ok(res.text.includes(`# HELP ${family[1]} `), `${family[1]} has HELP`);
    }
    for (const cluster of CLUSTERS) {
      const at = { cluster };
      const success = metricSeries(m, "controller_runtime_reconcile_total", {
        controller: "uuid",
        cluster,
        result: "success",
      });
      const total = metricSum(m, "controller_runtime_reconcile_total", { cluster });
      // One reconcile per creation and at most one per resulting status event (coalesced when still queued).
      assert.ok(success >= N && success <= 2 * N, `${cluster}: ${success} successful reconciles`);
      assert.equal(total, success, `${cluster}: no failed reconciles`);
      assert.equal(metricSum(m, "controller_runtime_reconcile_errors_total", at), 0);
      assert.equal(metricSum(m, "controller_runtime_reconcile_time_seconds_count", at), total, "one observation each");
      assert.ok(metricSum(m, "controller_runtime_reconcile_time_seconds_sum", at) > 0);
      // One status write per object this hub wrote, each answered 200 and each still the object's UUID.
      const mine = [...finals[CLUSTERS.indexOf(cluster)]].filter(([name, uuid]) =>
        written.get(cluster)!.has(`${name}=${uuid}`)
      );
      assert.equal(written.get(cluster)!.size, mine.length, `${cluster}: every UUID this hub wrote stayed`);
      const patched = metricSeries(m, "rest_client_requests_total", { cluster, method: "PATCH", code: "200" });
      assert.equal(patched, mine.length, `${cluster}: PATCH 200 = UUIDs this hub wrote`);
      // Anything else is a conflict lost to another writer.
      const conflicts = metricSum(m, "rest_client_requests_total", { cluster, method: "PATCH", code: "409" });
      assert.equal(metricSum(m, "rest_client_requests_total", { cluster, method: "PATCH" }), patched + conflicts);
      // The apiserver itself counted exactly one write per object, every one successful: a conflict (409) is a
      // write too, so it cannot hide a second one. Every write it saw is one the hub counted.
      const i = CLUSTERS.indexOf(cluster);
      assert.equal(writesAfter[i].ok - writesBefore[i].ok, N, `${cluster}: successful Uuid writes at the apiserver`);
      assert.equal(writesAfter[i].all - writesBefore[i].all, N, `${cluster}: Uuid writes at the apiserver`);
      assert.equal(patched + conflicts, N, `${cluster}: this hub, alone on its cluster, wrote each object once`);
      assert.ok(metricSum(m, "rest_client_requests_total", { cluster, method: "GET", code: "200" }) >= 2, "list+watch");
      // The pre-flight's reviews: with one watched namespace, one rules review answers its checks and access reviews
      // are asked only for what it does not allow (never more than the five asked one by one before).
      const reviews = metricSum(m, "rest_client_requests_total", { cluster, method: "POST", code: "201" });
      assert.ok(reviews >= 1 && reviews <= 5, `${cluster}: ${reviews} pre-flight reviews`);
      const adds = metricSum(m, "workqueue_adds_total", { name: "uuid", cluster });
      assert.ok(adds >= N && adds >= total, `${cluster}: ${adds} adds for ${total} reconciles`);
      assert.equal(metricSum(m, "workqueue_queue_duration_seconds_count", at), total, "every hand-out was reconciled");
      assert.equal(metricSum(m, "workqueue_depth", at), 0);
      assert.equal(metricSum(m, "workqueue_retries_total", at), 0);
      assert.equal(metricSum(m, "hub_cluster_state", { cluster, state: "watching" }), 1);
      assert.equal(metricSum(m, "hub_cluster_state", at), 1, "one state at a time");
      assert.equal(metricSum(m, "hub_cluster_objects", at), N);
      // The series must be there, and the age can be no older than the hub itself.
      const age = metricSeries(m, "hub_cluster_last_event_age_seconds", at);
      const hubAge = (Date.now() - hubStarted) / 1000;
      assert.ok(age >= 0 && age <= hubAge, `${cluster}: last event ${age} s ago, hub started ${hubAge} s ago`);
      assert.ok(metricSum(m, "hub_watch_connect_attempts_total", at) >= 2);
    }
    assert.equal(m.get("leader_election_master_status")?.length ?? 0, 0, "no election, no series");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub.kill();
    await Promise.all(apis.map((a) => a.deleteAllUuids(ns.name).catch(() => {})));
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});
