import assert from "node:assert/strict";
import Type from "typebox";
import { structuralSchema, StructuralSchemaError } from "./structural_schema.ts";
import { ResourceDefinitionError } from "./define_resource.ts";

const refused = (schema: unknown, path: RegExp, reason: RegExp) => {
  assert.throws(() => structuralSchema(schema, "spec"), (err: unknown) => {
    assert.ok(err instanceof StructuralSchemaError && err instanceof ResourceDefinitionError);
    assert.equal(err.name, "StructuralSchemaError");
    assert.match(err.path, path);
    assert.match(err.reason, reason);
    assert.match(err.message, /^cannot make a structural schema of spec/);
    return true;
  });
};

Deno.test("an object's fields, required list, constraints and default are kept, in a fixed key order", () => {
  const s = structuralSchema(
    Type.Object({
      image: Type.String({ minLength: 1, description: "The image." }),
      replicas: Type.Optional(Type.Integer({ minimum: 0, default: 1, format: "int32" })),
    }, { $id: "Spec", $schema: "https://json-schema.org/draft/2020-12/schema" }),
    "spec",
  );
  assert.deepEqual(s, {
    type: "object",
    required: ["image"],
    properties: {
      image: { description: "The image.", type: "string", minLength: 1 },
      replicas: { type: "integer", format: "int32", default: 1, minimum: 0 },
    },
  });
  assert.deepEqual(Object.keys(s.properties as object), ["image", "replicas"]);
  assert.deepEqual(Object.keys((s.properties as Record<string, object>).replicas), [
    "type",
    "format",
    "default",
    "minimum",
  ]);
});

Deno.test("a union of integer and string becomes x-kubernetes-int-or-string, as does the marker", () => {
  const s = structuralSchema(
    Type.Object({
      port: Type.Union([Type.Integer(), Type.String()], { description: "A port." }),
      target: Type.Unsafe<number | string>({ "x-kubernetes-int-or-string": true }),
      nullablePort: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    }),
    "spec",
  );
  assert.deepEqual(s.properties, {
    port: { description: "A port.", "x-kubernetes-int-or-string": true },
    target: { "x-kubernetes-int-or-string": true },
    nullablePort: { nullable: true, "x-kubernetes-int-or-string": true },
  });
});

Deno.test("an int-or-string union whose members carry constraints is refused, naming the field", () => {
  refused(
    Type.Object({ port: Type.Union([Type.Integer({ minimum: 1 }), Type.String()]) }),
    /^spec\.port$/,
    /int-or-string/,
  );
});

Deno.test("Unknown, Any and additionalProperties true keep unknown fields; a record becomes additionalProperties", () => {
  const s = structuralSchema(
    Type.Object({
      anything: Type.Unknown({ description: "Free-form." }),
      any: Type.Any(),
      open: Type.Object({ a: Type.String() }, { additionalProperties: true }),
      labels: Type.Record(Type.String(), Type.String()),
      blobs: Type.Record(Type.String(), Type.Unknown()),
    }),
    "spec",
  );
  assert.deepEqual(s.properties, {
    anything: { description: "Free-form.", "x-kubernetes-preserve-unknown-fields": true },
    any: { "x-kubernetes-preserve-unknown-fields": true },
    open: {
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" } },
      "x-kubernetes-preserve-unknown-fields": true,
    },
    labels: { type: "object", additionalProperties: { type: "string" } },
    blobs: { type: "object", additionalProperties: { "x-kubernetes-preserve-unknown-fields": true } },
  });
});

Deno.test("additionalProperties false is dropped: the apiserver refuses it beside properties and prunes anyway", () => {
  const s = structuralSchema(Type.Object({ a: Type.String() }, { additionalProperties: false }), "spec");
  assert.deepEqual(s, { type: "object", required: ["a"], properties: { a: { type: "string" } } });
});

Deno.test("a union with null becomes nullable; literals and an enum become a typed enum", () => {
  const s = structuralSchema(
    Type.Object({
      maybe: Type.Union([Type.String({ minLength: 2 }), Type.Null()]),
      mode: Type.Union([Type.Literal("Fast"), Type.Literal("Safe")], { default: "Safe" }),
      level: Type.Enum([1, 2, 3]),
      only: Type.Literal("x"),
      shaped: Type.Optional(Type.Union([Type.Object({ a: Type.String() }), Type.Null()])),
    }),
    "spec",
  );
  assert.deepEqual(s.properties, {
    maybe: { type: "string", nullable: true, minLength: 2 },
    mode: { type: "string", enum: ["Fast", "Safe"], default: "Safe" },
    level: { type: "integer", enum: [1, 2, 3] },
    only: { type: "string", enum: ["x"] },
    shaped: { type: "object", nullable: true, required: ["a"], properties: { a: { type: "string" } } },
  });
});

Deno.test("list and map markers, CEL rules and defaults pass through", () => {
  const rule = { rule: "self.min <= self.max", message: "min must not exceed max" };
  const s = structuralSchema(
    Type.Object({
      ports: Type.Array(Type.Object({ name: Type.String(), port: Type.Integer() }), {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        maxItems: 8,
      }),
      tags: Type.Array(Type.String(), { "x-kubernetes-list-type": "set" }),
      selector: Type.Record(Type.String(), Type.String(), { "x-kubernetes-map-type": "atomic" }),
      range: Type.Object({ min: Type.Integer(), max: Type.Integer() }, { "x-kubernetes-validations": [rule] }),
    }),
    "spec",
  );
  const p = s.properties as Record<string, Record<string, unknown>>;
  assert.equal(p.ports["x-kubernetes-list-type"], "map");
  assert.deepEqual(p.ports["x-kubernetes-list-map-keys"], ["name"]);
  assert.equal(p.ports.maxItems, 8);
  assert.deepEqual(p.tags, { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" });
  assert.equal(p.selector["x-kubernetes-map-type"], "atomic");
  assert.deepEqual(p.range["x-kubernetes-validations"], [rule]);
});

Deno.test("JSON Schema's numeric exclusive bounds become OpenAPI v3.0's booleans", () => {
  const s = structuralSchema(
    Type.Object({
      ratio: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
      stricterInclusive: Type.Number({ minimum: 5, exclusiveMinimum: 2 }),
    }),
    "spec",
  );
  assert.deepEqual(s.properties, {
    ratio: { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
    stricterInclusive: { type: "number", minimum: 5 },
  });
});

Deno.test("uniqueItems on scalars becomes a set list; on objects it is refused", () => {
  const s = structuralSchema(Type.Array(Type.String(), { uniqueItems: true }), "spec");
  assert.deepEqual(s, { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" });
  refused(Type.Array(Type.Object({ a: Type.String() }), { uniqueItems: true }), /^spec$/, /uniqueItems/);
});

Deno.test("an intersection of objects becomes one object", () => {
  const s = structuralSchema(
    Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.Integer()) })]),
    "spec",
  );
  assert.deepEqual(s, {
    type: "object",
    required: ["a"],
    properties: { a: { type: "string" }, b: { type: "integer" } },
  });
});

Deno.test("what cannot be made structural is refused with the field path and why", () => {
  refused(Type.Object({ a: Type.Union([Type.String(), Type.Number()]) }), /^spec\.a$/, /union of string \| number/);
  refused(
    Type.Object({ a: Type.Union([Type.Object({ x: Type.String() }), Type.Object({ y: Type.String() })]) }),
    /^spec\.a$/,
    /not structural/,
  );
  refused(Type.Object({ pair: Type.Tuple([Type.String(), Type.Number()]) }), /^spec\.pair$/, /tuples/);
  refused(Type.Object({ r: Type.Ref("Other") }), /^spec\.r$/, /references/);
  refused(Type.Object({ n: Type.Null() }), /^spec\.n$/, /only be null/);
  refused(Type.Object({ big: Type.BigInt() }), /^spec\.big$/, /cannot be stored/);
  refused(
    Type.Object({ xs: Type.Array(Type.Object({ n: Type.Unsafe<string>({ not: { type: "string" } }) })) }),
    /^spec\.xs\[\*\]\.n$/,
    /not/,
  );
  refused(
    Type.Object({ m: Type.Record(Type.String({ pattern: "^a" }), Type.String()) }),
    /^spec\.m$/,
    /patternProperties/,
  );
  refused(Type.Object({ a: Type.String({ errorMessage: "x" }) }), /^spec\.a$/, /keyword "errorMessage"/);
  refused(Type.Object({ e: Type.Enum(["a", 1]) }), /^spec\.e$/, /enum of mixed/);
  refused({ type: "array" }, /^spec$/, /items/);
  refused(
    Type.Object({ a: Type.String() }, { "x-kubernetes-validations": [{ message: "no rule" }] }),
    /^spec$/,
    /x-kubernetes-validations/,
  );
  refused(Type.Object({ a: Type.String({ "x-kubernetes-list-type": "set" }) }), /^spec\.a$/, /not an array/);
});

Deno.test("a schema nested deeper than the limit is refused instead of recursing on", () => {
  let s: unknown = { type: "string" };
  for (let i = 0; i < 100; i++) s = { type: "object", properties: { a: s } };
  refused(s, /^spec(\.a)+$/, /deeper than 64/);
});

Deno.test("the input schema is left as it was", () => {
  const input = Type.Object({ a: Type.Union([Type.Integer(), Type.String()]), b: Type.Unknown() });
  const before = JSON.stringify(input);
  structuralSchema(input, "spec");
  assert.equal(JSON.stringify(input), before);
});
