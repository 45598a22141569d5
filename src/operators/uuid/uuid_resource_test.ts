// The Uuid resource's definition names the resource the operator reconciles and crds/uuid.yaml publishes.

import assert from "node:assert/strict";
import { parse } from "yaml";
import { UUID_RESOURCE } from "./uuid_operator.ts";
import { Uuid } from "./uuid_resource.ts";

Deno.test("the Uuid definition names the operator's resource: group, version, kind, plural and scope", () => {
  const { group, version, kind, plural } = Uuid;
  assert.deepEqual({ group, version, kind, plural }, { ...UUID_RESOURCE });
  assert.equal(Uuid.namespaced, UUID_RESOURCE.namespaced ?? true);
});

Deno.test("the Uuid definition keeps the names, columns and status fields of crds/uuid.yaml as published", async () => {
  const crd = parse(await Deno.readTextFile(new URL("../../../crds/uuid.yaml", import.meta.url)));
  const served = crd.spec.versions[0];
  const d = Uuid.definition;
  assert.deepEqual(
    [d.group, d.version, d.kind, d.plural, d.singular, d.shortNames, d.scope ?? "Namespaced"],
    [
      crd.spec.group,
      served.name,
      crd.spec.names.kind,
      crd.spec.names.plural,
      crd.spec.names.singular,
      crd.spec.names.shortNames,
      crd.spec.scope,
    ],
  );
  assert.deepEqual(
    d.printerColumns?.map((c) => [c.name, c.type, c.jsonPath]),
    served.additionalPrinterColumns.map((c: Record<string, string>) => [c.name, c.type, c.jsonPath]),
  );
  const status = served.schema.openAPIV3Schema.properties.status.properties;
  for (const field of Object.keys(d.status?.properties ?? {})) {
    assert.equal(status[field]?.type, (d.status?.properties as Record<string, { type: string }>)[field].type, field);
  }
});
