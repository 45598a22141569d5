// Unit tests for validate and mutate handlers: options and defaults, verdicts, warnings and the JSON Patch answered.
import assert from "node:assert/strict";
import type { AdmissionRequest, StoredObject } from "../runtime/mod.ts";
import { AdmissionError, admissionWebhooks, selectorOf } from "./admission.ts";
import { defineHandlers } from "./handlers.ts";
import { defineOperator, OperatorDefinitionError } from "./define_operator.ts";
import { applyJsonPatch } from "./json_patch.ts";

const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" };

function request(over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: "u1",
    cluster: "prod",
    operation: "CREATE",
    object: { metadata: { name: "w", namespace: "ns" }, spec: { image: "nginx:1.27" } },
    namespace: "ns",
    name: "w",
    userInfo: { username: "jane" },
    dryRun: false,
    ...over,
  };
}

Deno.test("admissionWebhooks() gives each handler a webhook with the documented defaults", () => {
  const [v, m] = admissionWebhooks("site", { validate: function checkImage() {}, mutate: () => {} });
  assert.equal(v.type, "validating");
  assert.equal(v.id, "check-image");
  assert.deepEqual(v.operations, ["CREATE", "UPDATE"]);
  assert.equal(v.failurePolicy, "Ignore");
  assert.equal(v.sideEffects, "None");
  assert.equal(v.timeoutSeconds, 5);
  assert.equal(v.matchPolicy, "Equivalent");
  assert.equal(m.type, "mutating");
  assert.equal(m.id, "mutate"); // an arrow function takes the property's name
});

Deno.test("admissionWebhooks() takes the options and sends labels as an objectSelector", () => {
  const [w] = admissionWebhooks("site", {
    validate: {
      id: "strict",
      fn: () => {},
      operations: ["DELETE"],
      labels: { app: "web", tier: true, legacy: false },
      subresource: "status",
      failurePolicy: "Fail",
      timeoutSeconds: 2,
      sideEffects: "NoneOnDryRun",
      matchPolicy: "Exact",
    },
  });
  assert.deepEqual(w.operations, ["DELETE"]);
  assert.deepEqual(w.objectSelector, {
    matchLabels: { app: "web" },
    matchExpressions: [{ key: "tier", operator: "Exists" }, { key: "legacy", operator: "DoesNotExist" }],
  });
  assert.equal(w.subresource, "status");
  assert.equal(w.failurePolicy, "Fail");
  assert.equal(w.timeoutSeconds, 2);
  assert.equal(w.sideEffects, "NoneOnDryRun");
  assert.equal(w.matchPolicy, "Exact");
});

Deno.test("admissionWebhooks() refuses a bad option with a line naming it", () => {
  const bad = (validate: unknown, re: RegExp) =>
    assert.throws(() => admissionWebhooks("site", { validate: validate as () => void }), re);
  bad({ fn: () => {}, timeoutSeconds: 31 }, /timeoutSeconds must be an integer from 1 to 30, got 31/);
  bad({ fn: () => {}, failurePolicy: "Never" }, /failurePolicy must be Ignore or Fail, got "Never"/);
  bad({ fn: () => {}, operations: ["PATCH"] }, /invalid operation "PATCH"/);
  bad({ fn: () => {}, id: "Not_A_Label" }, /must be a DNS label/);
  bad({}, /is not a function/);
  bad([{ id: "a", fn: () => {} }, { id: "a", fn: () => {} }], /share the id "a"/);
  assert.throws(() => defineOperator({ name: "x", resource, validate: 1 as never, reconcile: async () => {} }));
  assert.ok(OperatorDefinitionError);
});

Deno.test("a validate handler allows, refuses with its message and code, and warns", async () => {
  const [w] = admissionWebhooks("site", {
    validate: ({ spec, warn }) => {
      if (!String(spec.image).includes(":")) warn("spec.image has no tag: pin one");
      if (String(spec.image).endsWith(":latest")) throw new AdmissionError("spec.image must not be :latest", 422);
    },
  });
  const signal = new AbortController().signal;
  assert.deepEqual(await w.review(request(), signal), { allowed: true });
  assert.deepEqual(
    await w.review(request({ object: { metadata: { name: "w" }, spec: { image: "nginx" } } }), signal),
    { allowed: true, warnings: ["spec.image has no tag: pin one"] },
  );
  assert.deepEqual(
    await w.review(request({ object: { metadata: { name: "w" }, spec: { image: "nginx:latest" } } }), signal),
    { allowed: false, code: 422, message: "spec.image must not be :latest" },
  );
});

Deno.test("a handler's other errors escape the review (the server answers 500: failurePolicy decides)", async () => {
  const [w] = admissionWebhooks("site", {
    validate: () => {
      throw new TypeError("bug");
    },
  });
  await assert.rejects(w.review(request(), new AbortController().signal), TypeError);
});

Deno.test("a mutate handler's in-place change is answered as a JSON Patch that yields the changed object", async () => {
  const [w] = admissionWebhooks("site", {
    mutate: ({ spec, name, object }) => {
      spec.content ??= `Welcome to ${name}`;
      object.metadata.labels = { ...object.metadata.labels, "app.kubernetes.io/name": "web" };
    },
  });
  const req = request();
  const verdict = await w.review(req, new AbortController().signal);
  assert.equal(verdict.allowed, true);
  assert.deepEqual(applyJsonPatch(req.object, verdict.patch!), {
    metadata: { name: "w", namespace: "ns", labels: { "app.kubernetes.io/name": "web" } },
    spec: { image: "nginx:1.27", content: "Welcome to w" },
  });
  // The request's object itself is untouched.
  assert.deepEqual(req.object!.spec, { image: "nginx:1.27" });
});

Deno.test("a mutate handler that returns an object, or changes nothing, is answered accordingly", async () => {
  const [returns, idle] = admissionWebhooks("site", {
    mutate: [
      { id: "returns", fn: ({ object }) => ({ ...object, spec: { image: "nginx:1.28" } }) as StoredObject },
      { id: "idle", fn: () => {} },
    ],
  });
  const s = new AbortController().signal;
  assert.deepEqual((await returns.review(request(), s)).patch, [
    { op: "replace", path: "/spec/image", value: "nginx:1.28" },
  ]);
  assert.deepEqual(await idle.review(request({ object: { metadata: { name: "w" } } }), s), { allowed: true });
});

Deno.test("a handler sees the old object, the operation, the user, the dry-run flag and the cluster", async () => {
  let seen: unknown;
  const [w] = admissionWebhooks("site", {
    validate: (ctx) => {
      seen = [ctx.operation, ctx.oldObject?.spec, ctx.userInfo.username, ctx.dryRun, ctx.cluster, ctx.namespace];
    },
  });
  await w.review(
    request({ operation: "UPDATE", oldObject: { metadata: { name: "w" }, spec: { image: "a" } }, dryRun: true }),
    new AbortController().signal,
  );
  assert.deepEqual(seen, ["UPDATE", { image: "a" }, "jane", true, "prod", "ns"]);
});

Deno.test("defineHandlers() and defineOperator() carry their validate and mutate handlers as webhooks", () => {
  const op = defineHandlers({ name: "site", resource, validate: () => {}, mutate: () => {} });
  assert.deepEqual(op.webhooks?.map((w) => w.type), ["validating", "mutating"]);
  const plain = defineOperator({ name: "plain", resource, reconcile: async () => {} });
  assert.equal(plain.webhooks, undefined);
});

Deno.test("selectorOf() maps strings to matchLabels and booleans to Exists/DoesNotExist", () => {
  assert.deepEqual(selectorOf({ a: "1" }), { matchLabels: { a: "1" } });
  assert.deepEqual(selectorOf({}), {});
});
