// What the watch cache holds per object, by projection: `deno run -A --v8-flags=--expose-gc bench/tools/store_bytes.ts`.
//
// Fills three Stores (one per cluster) with N Uuid objects as the apiserver sends them (managedFields, a spec, the
// status the Uuid operator writes), each parsed from JSON as a watch event is, and reports V8's heap used per object
// after a full collection, for trimObject (identity, spec and status: the default) and for the Uuid operator's
// declared reads; and what one queued request costs while N wait in the shared queue (a first start queues every listed
// object), with the requests built as the informer builds them. The heap only: what a process holds at peak also
// depends on V8's heap sizing and garbage.

import { parseArgs } from "node:util";
import { fieldProjection, type Projection, Store, trimObject } from "../../src/runtime/mod.ts";
import { FairWorkQueue } from "../../src/queue/mod.ts";

const { values } = parseArgs({ args: Deno.args, options: { objects: { type: "string", default: "30000" } } });
const N = Number(values.objects);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !Number.isInteger(N) || N < 3) {
  console.error("store_bytes: run with --v8-flags=--expose-gc; --objects must be a whole number ≥ 3");
  Deno.exit(2);
}

function raw(i: number): Record<string, unknown> {
  return JSON.parse(JSON.stringify({
    apiVersion: "demo.operator/v1",
    kind: "Uuid",
    metadata: {
      name: `s-${i}`,
      namespace: "bench-scale-a1b2c3",
      uid: crypto.randomUUID(),
      resourceVersion: String(1_000_000 + i),
      generation: 1,
      creationTimestamp: "2026-12-07T12:00:00Z",
      managedFields: [{
        manager: "operator-hub",
        operation: "Update",
        apiVersion: "demo.operator/v1",
        time: "2026-12-07T12:00:01Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:status": { ".": {}, "f:uuid": {}, "f:state": {}, "f:message": {} } },
      }],
    },
    spec: { owner: "team-a", note: "" },
    status: {
      uuid: crypto.randomUUID(),
      state: "Ok",
      message: "UUID assigned by operator-hub",
      observedGeneration: 1,
    },
  }));
}

function bytesPerObject(project: Projection): number {
  gc!();
  gc!();
  const before = Deno.memoryUsage().heapUsed;
  const stores = [new Store(project), new Store(project), new Store(project)];
  for (const s of stores) for (let i = 0; i < N / 3; i++) s.upsert(raw(i));
  gc!();
  gc!();
  const used = Deno.memoryUsage().heapUsed - before;
  if (stores.reduce((n, s) => n + s.size, 0) !== 3 * Math.floor(N / 3)) throw new Error("store_bytes: lost objects");
  return used / (3 * Math.floor(N / 3));
}

const rows: [string, Projection][] = [
  ["trimObject (identity, spec, status)", trimObject],
  [
    'reads: ["status.uuid", "status.state", "status.message"]',
    fieldProjection(["status.uuid", "status.state", "status.message"]),
  ],
];
const result: Record<string, number> = {};
for (const [label, project] of rows) {
  const samples = [bytesPerObject(project), bytesPerObject(project), bytesPerObject(project)].sort((a, b) => a - b);
  result[label] = Math.round(samples[1]);
  console.log(`${label}: ${result[label]} B per object (median of 3, ${N} objects)`);
}

/** Heap per queued request: N objects listed into three stores, then every one queued for the Uuid operator. */
function queuedBytesPerRequest(): number {
  const stores = [new Store(), new Store(), new Store()];
  for (const s of stores) for (let i = 0; i < N / 3; i++) s.upsert(raw(i));
  gc!();
  gc!();
  const before = Deno.memoryUsage().heapUsed;
  const queue = new FairWorkQueue();
  stores.forEach((s, c) => {
    for (const key of s.keys()) queue.add({ operator: "uuid", request: s.requestOf(`cluster-${c}`, key) }, "low");
  });
  gc!();
  gc!();
  const used = Deno.memoryUsage().heapUsed - before;
  if (queue.len() !== 3 * Math.floor(N / 3)) throw new Error("store_bytes: lost queued requests");
  return used / queue.len();
}

const queued = [queuedBytesPerRequest(), queuedBytesPerRequest(), queuedBytesPerRequest()].sort((a, b) => a - b);
result["a queued request"] = Math.round(queued[1]);
console.log(`a queued request: ${result["a queued request"]} B (median of 3, ${N} queued)`);
