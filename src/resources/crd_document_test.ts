import assert from "node:assert/strict";
import Type from "typebox";
import { crdOf, isResource, SDK_STATUS_FIELD } from "./crd_document.ts";
import { defineResource, ResourceDefinitionError } from "./define_resource.ts";

const Tenant = defineResource({
  group: "tenancy.example.com",
  version: "v1alpha1",
  kind: "Tenant",
  plural: "tenants",
  scope: "Cluster",
  shortNames: ["tn"],
  categories: ["all", "tenancy"],
  description: "A tenant: a namespace and its quota.",
  spec: Type.Object({ cpu: Type.Union([Type.Integer(), Type.String()]), owner: Type.Optional(Type.String()) }),
  status: Type.Object({ phase: Type.Optional(Type.String()) }),
  printerColumns: [
    { name: "CPU", type: "string", jsonPath: ".spec.cpu" },
    { name: "Owner", type: "string", jsonPath: ".spec.owner", priority: 1, description: "Who owns it." },
  ],
});

Deno.test("the CRD carries the names, scope, one served and stored version, the status subresource and columns", () => {
  const crd = crdOf(Tenant);
  assert.equal(crd.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(crd.kind, "CustomResourceDefinition");
  assert.equal(crd.metadata.name, "tenants.tenancy.example.com");
  assert.equal(crd.spec.group, "tenancy.example.com");
  assert.equal(crd.spec.scope, "Cluster");
  assert.deepEqual(crd.spec.names, {
    kind: "Tenant",
    listKind: "TenantList",
    plural: "tenants",
    singular: "tenant",
    shortNames: ["tn"],
    categories: ["all", "tenancy"],
  });
  const [version] = crd.spec.versions;
  assert.equal(crd.spec.versions.length, 1);
  assert.equal(version.name, "v1alpha1");
  assert.equal(version.served && version.storage, true);
  assert.deepEqual(version.subresources, { status: {} });
  assert.deepEqual(version.additionalPrinterColumns, [
    { name: "CPU", type: "string", jsonPath: ".spec.cpu" },
    { name: "Owner", type: "string", jsonPath: ".spec.owner", description: "Who owns it.", priority: 1 },
  ]);
});

Deno.test("the root schema holds the description, the structural spec, and spec is required when it requires a field", () => {
  const root = crdOf(Tenant).spec.versions[0].schema.openAPIV3Schema;
  assert.equal(root.description, "A tenant: a namespace and its quota.");
  assert.equal(root.type, "object");
  assert.deepEqual(root.required, ["spec"]);
  const spec = (root.properties as Record<string, Record<string, unknown>>).spec;
  assert.deepEqual(spec, {
    type: "object",
    required: ["cpu"],
    properties: { cpu: { "x-kubernetes-int-or-string": true }, owner: { type: "string" } },
  });
  const loose = defineResource({ ...Tenant.definition, spec: Type.Object({ a: Type.Optional(Type.String()) }) });
  assert.equal(crdOf(loose).spec.versions[0].schema.openAPIV3Schema.required, undefined);
});

Deno.test("the SDK's status.handlers is added beside the definition's own status fields, and without a status", () => {
  const status = (r: typeof Tenant) =>
    (crdOf(r).spec.versions[0].schema.openAPIV3Schema.properties as Record<string, Record<string, unknown>>).status;
  const handlers = {
    description: "The handlers' progress (operator-hub's defineHandlers).",
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  };
  assert.deepEqual(status(Tenant), {
    type: "object",
    properties: { phase: { type: "string" }, [SDK_STATUS_FIELD]: handlers },
  });
  const bare = defineResource({ ...Tenant.definition, status: undefined });
  assert.deepEqual(status(bare as typeof Tenant), { type: "object", properties: { handlers } });
});

Deno.test("a status field named like the SDK's own is refused, naming it", () => {
  const clash = defineResource({ ...Tenant.definition, status: Type.Object({ handlers: Type.String() }) });
  assert.throws(() => crdOf(clash), (err: unknown) => {
    assert.ok(err instanceof ResourceDefinitionError);
    assert.match(err.message, /^cannot make the CRD of Tenant \(tenants\.tenancy\.example\.com\): status\.handlers: /);
    return true;
  });
});

Deno.test("a spec that cannot be made structural is refused with the kind and the field path", () => {
  const bad = defineResource({
    ...Tenant.definition,
    spec: Type.Object({ rules: Type.Array(Type.Object({ to: Type.Union([Type.String(), Type.Boolean()]) })) }),
  });
  assert.throws(
    () => crdOf(bad),
    /^ResourceDefinitionError: cannot make the CRD of Tenant \(tenants\.tenancy\.example\.com\): spec\.rules\[\*\]\.to: a union of string \| boolean is not structural/,
  );
});

Deno.test("the same definition gives the same document, key for key", () => {
  assert.equal(JSON.stringify(crdOf(Tenant)), JSON.stringify(crdOf(Tenant)));
});

Deno.test("isResource tells a defined resource from a plain ResourceType and other values", () => {
  assert.equal(isResource(Tenant), true);
  assert.equal(isResource({ group: "g.io", version: "v1", kind: "K", plural: "ks", namespaced: true }), false);
  assert.equal(isResource(null), false);
  assert.equal(isResource({ definition: { group: "g.io", kind: "K", plural: "ks", version: "v1" } }), false);
});
