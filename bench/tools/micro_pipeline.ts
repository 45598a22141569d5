// Micro-benchmark of the hub's in-process path, without HTTP: watch events → store → operator
// pre-check → fair queue → controller → Uuid reconciler → (fake) status write → its own watch event,
// which the pre-check drops (as EngagedCluster does).
// It isolates the CPU the framework spends per object from the cost of Deno's fetch and TLS.
//
// Usage: deno run --allow-all bench/tools/micro_pipeline.ts [objects] [rounds] [nometrics]
// Prints CPU µs per object and per reconcile for each round (process CPU from /proc, all threads).

import { HubMetrics } from "../../src/hub/health/metrics.ts";
import { uuidOperator } from "../../src/operators/uuid/mod.ts";
import { defaultControllerRateLimiter, FairWorkQueue, TokenBucket } from "../../src/queue/mod.ts";
import {
  type ApiClient,
  Controller,
  KubeResourceClient,
  type ReconcileTarget,
  requestOf,
  Store,
  trimObject,
} from "../../src/runtime/mod.ts";
import { Logger, SystemClock } from "../../src/util/mod.ts";
import { cpuMs } from "../lib/proc.ts";

const N = Number(Deno.args[0] ?? 21_000);
const ROUNDS = Number(Deno.args[1] ?? 5);
const CLUSTERS = ["prod", "staging", "dev"];
/** "nometrics" drops the Prometheus hooks, to show what the metrics cost per object. */
const VARIANT = Deno.args[2] ?? "";

/** A watch event's object as the apiserver sends it (managedFields included), parsed from JSON like the real path. */
function rawObject(ns: string, name: string, rv: number, status?: Record<string, unknown>): string {
  return JSON.stringify({
    type: status ? "MODIFIED" : "ADDED",
    object: {
      apiVersion: "demo.operator/v1",
      kind: "Uuid",
      metadata: {
        name,
        namespace: ns,
        uid: crypto.randomUUID(),
        resourceVersion: String(rv),
        generation: 1,
        creationTimestamp: "2026-12-02T09:00:00Z",
        managedFields: [{
          apiVersion: "demo.operator/v1",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:spec": {} },
          manager: "deno",
          operation: "Update",
          time: "2026-12-02T09:00:00Z",
        }],
      },
      spec: {},
      ...(status ? { status } : {}),
    },
  });
}

async function round(n: number): Promise<{ cpuMs: number; reconciles: number; wallMs: number }> {
  const clock = new SystemClock();
  const logger = new Logger({ level: "info", write: () => {} });
  const metrics = new HubMetrics(() => ({}));
  const m = metrics;
  const operator = uuidOperator();
  const name = operator.name;
  const queue = new FairWorkQueue({
    clock,
    rateLimiter: defaultControllerRateLimiter({ clock }),
    hooks: VARIANT === "nometrics" ? {} : {
      added: (key) => m.adds.inc(key.operator, key.request.cluster),
      handedOut: (key, waitedMs) => m.queueDuration.observe(waitedMs / 1000, key.operator, key.request.cluster),
      retried: (key) => m.retries.inc(key.operator, key.request.cluster),
    },
  });
  let reconciles = 0;
  let rv = 1000;
  const targets = new Map<string, ReconcileTarget & { store: Store }>();
  const pendingEvents: (() => void)[] = [];
  for (const cluster of CLUSTERS) {
    const store = new Store(operator.project ?? trimObject);
    const budget = new TokenBucket(1e9, 1_000_000, { clock });
    const api: ApiClient = {
      async request<T>(method: string, path: string, options: { body?: unknown } = {}): Promise<T> {
        await budget.wait();
        if (method === "GET") return { resources: [{ name: "uuid" }, { name: "uuid/status" }] } as T;
        // The status write: answer like the apiserver, and queue the watch event it causes.
        const parts = path.split("/");
        const ns = parts[5], obj = parts[7];
        const status = (options.body as { status: Record<string, unknown> }).status;
        const line = rawObject(ns, obj, ++rv, status);
        pendingEvents.push(() => deliver(cluster, line));
        return JSON.parse(line).object as T;
      },
    };
    const events = { record: () => Promise.resolve() };
    const info = { statusSubresource: true };
    const client = new KubeResourceClient({
      api,
      cluster,
      operator: name,
      type: operator.resource,
      verbs: new Set(operator.verbs),
      store,
      project: operator.project ?? trimObject,
      info,
      rediscover: () => Promise.resolve(info),
      events,
    });
    targets.set(cluster, { reconciler: operator.reconciler, client, events, cluster: () => undefined, store });
  }
  const deliver = (cluster: string, line: string) => {
    const ev = JSON.parse(line);
    const store = targets.get(cluster)!.store;
    const key = store.upsert(ev.object);
    const obj = store.get(key);
    if (!operator.needsReconcile || !obj || operator.needsReconcile(obj)) {
      controller.enqueue(name, [requestOf(cluster, key)]);
    }
  };
  const controller = new Controller({
    queue,
    target: (c) => targets.get(c),
    concurrency: 16,
    budget: new TokenBucket(1e9, 1_000_000, { clock }),
    clock,
    logger,
    observer: {
      reconciled: (cluster, _operator, outcome, seconds) => {
        reconciles++;
        if (VARIANT === "nometrics") return;
        m.reconcileTotal.inc(name, cluster, outcome);
        m.reconcileTime.observe(seconds, name, cluster);
      },
    },
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  const lines = CLUSTERS.map(() =>
    Array.from({ length: n / CLUSTERS.length }, (_, i) => rawObject("bench", `o-${i}`, ++rv))
  );
  const c0 = cpuMs(Deno.pid);
  const t0 = performance.now();
  // Events arrive in chunks, as from a watch stream.
  for (let i = 0; i < lines[0].length; i += 50) {
    CLUSTERS.forEach((c, ci) => lines[ci].slice(i, i + 50).forEach((l) => deliver(c, l)));
    await new Promise((r) => setTimeout(r, 0));
    for (const e of pendingEvents.splice(0)) e();
  }
  while (reconciles < n || pendingEvents.length > 0) {
    await new Promise((r) => setTimeout(r, 0));
    for (const e of pendingEvents.splice(0)) e();
  }
  const wallMs = performance.now() - t0;
  const used = cpuMs(Deno.pid) - c0;
  stop.abort();
  await running;
  return { cpuMs: used, reconciles, wallMs };
}

await round(3000); // warm up the JIT
for (let r = 0; r < ROUNDS; r++) {
  const res = await round(N);
  console.log(
    `round ${r + 1}: ${N} objects, ${res.reconciles} reconciles in ${Math.round(res.wallMs)} ms; CPU ${
      (res.cpuMs / N * 1000).toFixed(0)
    } µs/object, ${(res.cpuMs / res.reconciles * 1000).toFixed(0)} µs/reconcile`,
  );
}
