// Unit tests for the stateless parts of defineHandlers(): handler and timer resolution, the projection.
import assert from "node:assert/strict";
import type { StoredObject } from "../runtime/mod.ts";
import { finalizersOf, handlerReads, keepHandlerFields, resolve, resolveTimers } from "./_handler_support.ts";
import { OperatorDefinitionError } from "./define_operator.ts";

const noop = () => Promise.resolve();
/** A function without a name (an arrow in an object literal would be named after its key). */
const anonymous = () => [() => Promise.resolve()][0];

Deno.test("resolve settles ids from `id`, the function's name, or phase and position, and accepts one handler or a list", () => {
  function namedHandler() {
    return Promise.resolve();
  }
  const got = resolve([namedHandler, { fn: noop, id: "explicit" }, { fn: anonymous() }], "create");
  assert.deepEqual(got.map((h) => h.id), ["namedHandler", "explicit", "create-2"]);
  assert.deepEqual(resolve(undefined, "delete"), []);
  assert.deepEqual(resolve({ fn: noop, id: "one", field: "spec.size" }, "update").map((h) => [h.id, h.field]), [
    ["one", "spec.size"],
  ]);
});

Deno.test("resolve refuses a non-function, a field outside update handlers, and duplicate ids, naming the handler", () => {
  const bad = (fn: () => unknown, message: RegExp) =>
    assert.throws(fn, (err: Error) => err instanceof OperatorDefinitionError && message.test(err.message));
  // deno-lint-ignore no-explicit-any -- a JavaScript caller's mistakes
  const any = (v: unknown) => v as any;
  bad(() => resolve(any([noop, "x"]), "create"), /^create handler #1 is not a function \(nor \{ fn \}\)$/);
  bad(() => resolve(any([{ id: "x" }]), "resume"), /^resume handler #0 is not a function/);
  bad(
    () => resolve({ fn: noop, field: "spec" }, "create"),
    /^create handler #0: `field` applies to update handlers only$/,
  );
  bad(() => resolve([{ fn: noop, id: "a" }, { fn: noop, id: "a" }], "delete"), /two delete handlers share the id "a"/);
});

Deno.test("resolveTimers settles ids and refuses a missing fn, a non-positive or infinite interval, and duplicate ids", () => {
  function tick() {
    return Promise.resolve();
  }
  assert.deepEqual(
    resolveTimers([{ fn: tick, intervalMs: 10 }, { fn: noop, intervalMs: 5, id: "t" }]).map((
      t,
    ) => [t.id, t.intervalMs]),
    [
      ["tick", 10],
      ["t", 5],
    ],
  );
  assert.deepEqual(resolveTimers({ fn: anonymous(), intervalMs: 1 }).map((t) => t.id), ["timer-0"]);
  assert.deepEqual(resolveTimers(undefined), []);
  for (const intervalMs of [0, -1, Infinity, NaN]) {
    assert.throws(
      () => resolveTimers({ fn: noop, intervalMs }),
      (err: Error) =>
        err instanceof OperatorDefinitionError &&
        err.message === `timer #0: intervalMs must be a positive number, got ${intervalMs}`,
    );
  }
  // deno-lint-ignore no-explicit-any -- a JavaScript caller's mistake
  assert.throws(() => resolveTimers({ intervalMs: 5 } as any), /timer #0: fn must be a function/);
  assert.throws(
    () => resolveTimers([{ fn: noop, intervalMs: 1, id: "x" }, { fn: noop, intervalMs: 2, id: "x" }]),
    /two timers share the id "x"/,
  );
});

Deno.test("keepHandlerFields keeps labels, annotations and finalizers on top of the default projection", () => {
  const raw = {
    metadata: {
      name: "x",
      namespace: "ns",
      resourceVersion: "4",
      labels: { a: "1" },
      annotations: { b: "2" },
      finalizers: ["f"],
      managedFields: [{}],
      ownerReferences: [{}],
    },
    spec: { s: 1 },
    status: { t: 2 },
    data: "dropped",
  };
  // Fields the projection leaves undefined (uid, generation) are not sent anywhere: compare as JSON.
  const out = JSON.parse(JSON.stringify(keepHandlerFields(raw)));
  assert.deepEqual(out, {
    metadata: {
      name: "x",
      namespace: "ns",
      resourceVersion: "4",
      labels: { a: "1" },
      annotations: { b: "2" },
      finalizers: ["f"],
    },
    spec: { s: 1 },
    status: { t: 2 },
  });
});

Deno.test("finalizersOf returns a copy, and an empty list when there are none", () => {
  const obj = { metadata: { name: "x", finalizers: ["a"] } } as StoredObject;
  const copy = finalizersOf(obj);
  copy.push("b");
  assert.deepEqual((obj.metadata as { finalizers?: string[] }).finalizers, ["a"]);
  assert.deepEqual(finalizersOf({ metadata: { name: "y" } }), []);
});

Deno.test("handlerReads adds what the handlers' machinery reads to an operator's reads, each once", () => {
  assert.deepEqual(handlerReads(["status.message", "spec"]), [
    "spec",
    "status.handlers",
    "metadata.labels",
    "metadata.annotations",
    "metadata.finalizers",
    "status.message",
  ]);
});
