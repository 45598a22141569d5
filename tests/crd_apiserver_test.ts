// A CRD printed by `operator-hub crd` from a definition, against a real apiserver (prod): accepted and Established;
// objects that break the schema (a required field, a minLength, a CEL rule, int-or-string, an unknown field) refused
// server-side with the schema's message; a valid one stored with its defaults; the SDK's status.handlers kept.
// The resource's group is unique per run, so parallel test files never share it; the CRD is deleted after.

import assert from "node:assert/strict";
import { parse } from "yaml";
import { kubectl, kubectlOk, testNamespace } from "../dev/support/mod.ts";
import { crdMain } from "../src/cli/commands/crd.ts";

const CONTEXT = "prod";
const ROOT = new URL("../", import.meta.url);

/** A module defining a Probe resource in `group`, as an operator author's resource file would. */
function probeModule(group: string): string {
  return `
    import Type from "typebox";
    import { defineResource } from "${new URL("resources.ts", ROOT).href}";
    export const Probe = defineResource({
      group: "${group}", version: "v1", kind: "Probe", plural: "probes", shortNames: ["prb"],
      spec: Type.Object({
        name: Type.String({ minLength: 3, description: "At least three characters." }),
        port: Type.Union([Type.Integer(), Type.String()]),
        replicas: Type.Optional(Type.Integer({ minimum: 0, default: 1 })),
        range: Type.Optional(Type.Object({ min: Type.Integer(), max: Type.Integer() }, {
          "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }],
        })),
        extra: Type.Optional(Type.Unknown()),
      }),
      status: Type.Object({ phase: Type.Optional(Type.String()) }),
      printerColumns: [{ name: "Port", type: "string", jsonPath: ".spec.port" }],
    });
  `;
}

Deno.test("a generated CRD is Established; the apiserver refuses invalid objects with the schema's messages and stores a valid one with its defaults and the SDK's status", async () => {
  const suffix = crypto.randomUUID().slice(0, 8);
  const group = `p${suffix}.crd-e2e.operator-hub.dev`;
  const crdName = `probes.${group}`;
  const dir = await Deno.makeTempDir({ prefix: "crd_apiserver_test_" });
  await using ns = await testNamespace("crd-e2e", { contexts: [CONTEXT] });
  try {
    await Deno.writeTextFile(`${dir}/probe_resource.ts`, probeModule(group));
    let yaml = "";
    assert.equal(await crdMain([`${dir}/probe_resource.ts`], { print: (t) => yaml += t }), 0);
    await kubectlOk(CONTEXT, ["apply", "-f", "-"], { stdin: yaml });
    await kubectlOk(CONTEXT, ["wait", "--for=condition=Established", `crd/${crdName}`, "--timeout=30s"]);

    const probe = (name: string, spec: Record<string, unknown>) =>
      JSON.stringify({ apiVersion: `${group}/v1`, kind: "Probe", metadata: { name, namespace: ns.name }, spec });
    // The discovery of a new CRD can lag its Established condition by a moment: retry "no matches for kind".
    const create = async (name: string, spec: Record<string, unknown>) => {
      for (let i = 0;; i++) {
        const r = await kubectl(CONTEXT, ["create", "-f", "-"], { stdin: probe(name, spec) });
        if (r.code === 0 || !/no matches for kind|the server could not find/.test(r.stderr) || i >= 20) return r;
        await new Promise((ok) => setTimeout(ok, 250));
      }
    };
    const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
      ["missing", { port: 80 }, /spec\.name: Required value/],
      [
        "short",
        { name: "ab", port: 80 },
        /spec\.name: Invalid value: "ab": spec\.name in body should be at least 3 chars long/,
      ],
      [
        "cel",
        { name: "abc", port: 80, range: { min: 5, max: 1 } },
        /spec\.range: Invalid value: .*min must not exceed max/,
      ],
      ["port", { name: "abc", port: true }, /spec\.port in body must be of type integer,string/],
      [
        "negative",
        { name: "abc", port: 80, replicas: -1 },
        /spec\.replicas in body should be greater than or equal to 0/,
      ],
      ["unknown", { name: "abc", port: 80, color: "red" }, /unknown field "spec\.color"/],
    ];
    for (const [name, spec, message] of refusals) {
      const r = await create(name, spec);
      assert.notEqual(r.code, 0, `${name}: must be refused`);
      assert.match(r.stderr, message, `${name}: ${r.stderr}`);
    }

    const ok = await create("valid", { name: "abc", port: "http", range: { min: 1, max: 2 }, extra: { any: [1] } });
    assert.equal(ok.code, 0, ok.stderr);
    const patch = JSON.stringify({ status: { phase: "Ready", handlers: { create: { adopt: { done: true } } } } });
    await kubectlOk(CONTEXT, [
      "patch",
      "-n",
      ns.name,
      `probes.${group}`,
      "valid",
      "--subresource=status",
      "--type=merge",
      "-p",
      patch,
    ]);
    const stored = parse(await kubectlOk(CONTEXT, ["get", "-n", ns.name, `probes.${group}`, "valid", "-o", "yaml"]));
    assert.deepEqual(stored.spec, {
      name: "abc",
      port: "http",
      replicas: 1,
      range: { min: 1, max: 2 },
      extra: { any: [1] },
    });
    assert.deepEqual(stored.status, { phase: "Ready", handlers: { create: { adopt: { done: true } } } });
    const table = await kubectlOk(CONTEXT, ["get", "-n", ns.name, `prb.${group}`]);
    assert.match(table, /^NAME\s+PORT\nvalid\s+http\n/);
  } finally {
    await kubectl(CONTEXT, ["delete", "crd", crdName, "--ignore-not-found", "--wait=false"]);
    await Deno.remove(dir, { recursive: true });
  }
});

/** Every form the generator translates, in one resource: the apiserver must take the CRD as it is. */
function kitchenSinkModule(group: string): string {
  return `
    import Type from "typebox";
    import { defineResource } from "${new URL("resources.ts", ROOT).href}";
    export const Sink = defineResource({
  group: "${group}", version: "v1beta1", kind: "Sink", plural: "sinks", scope: "Cluster",
  shortNames: ["sk"], categories: ["crdcheck"],
  spec: Type.Object({
    port: Type.Union([Type.Integer(), Type.String()]),
    nport: Type.Optional(Type.Union([Type.Integer(), Type.String(), Type.Null()])),
    anything: Type.Optional(Type.Unknown()),
    any: Type.Optional(Type.Any()),
    open: Type.Optional(Type.Object({ a: Type.String() }, { additionalProperties: true })),
    closed: Type.Optional(Type.Object({ a: Type.String() }, { additionalProperties: false })),
    labels: Type.Optional(Type.Record(Type.String(), Type.String(), { "x-kubernetes-map-type": "atomic" })),
    blobs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    maybe: Type.Optional(Type.Union([Type.String({ minLength: 2 }), Type.Null()])),
    mode: Type.Optional(Type.Union([Type.Literal("Fast"), Type.Literal("Safe")], { default: "Safe" })),
    level: Type.Optional(Type.Enum([1, 2, 3])),
    only: Type.Optional(Type.Literal("x")),
    shaped: Type.Optional(Type.Union([Type.Object({ a: Type.String() }), Type.Null()])),
    ports: Type.Optional(Type.Array(Type.Object({ name: Type.String(), port: Type.Integer() }), { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], maxItems: 8 })),
    tags: Type.Optional(Type.Array(Type.String(), { uniqueItems: true, maxItems: 10 })),
    ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    both: Type.Optional(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.Integer()) })])),
    range: Type.Optional(Type.Object({ min: Type.Integer(), max: Type.Integer() }, { "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }] })),
    when: Type.Optional(Type.String({ format: "date-time" })),
    nested: Type.Optional(Type.Object({ deep: Type.Object({ deeper: Type.Array(Type.Array(Type.Integer({ default: 3 }))) }) })),
  }, { \$id: "Spec" }),
  status: Type.Object({ conditions: Type.Optional(Type.Array(Type.Object({ type: Type.String(), status: Type.String() }), { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })) }),
  printerColumns: [{ name: "Port", type: "string", jsonPath: ".spec.port" }, { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }],
});
  `;
}

Deno.test("the apiserver takes a CRD with every form the generator translates (int-or-string, unknown fields, records, nullable, enums, intersections, list and map markers, CEL, defaults)", async () => {
  const group = `s${crypto.randomUUID().slice(0, 8)}.crd-e2e.operator-hub.dev`;
  const dir = await Deno.makeTempDir({ prefix: "crd_apiserver_test_" });
  try {
    await Deno.writeTextFile(`${dir}/sink_resource.ts`, kitchenSinkModule(group));
    let yaml = "";
    assert.equal(await crdMain([`${dir}/sink_resource.ts`], { print: (t) => yaml += t }), 0);
    const out = await kubectlOk(CONTEXT, ["create", "--dry-run=server", "-f", "-"], { stdin: yaml });
    assert.match(out, new RegExp(`sinks\\.${group.replaceAll(".", "\\.")} created \\(server dry run\\)`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
