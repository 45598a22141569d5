import assert from "node:assert/strict";
import Type from "typebox";
import { defineResource } from "../../resources/mod.ts";
import { crdManifests } from "./_env_crds.ts";
import { TestEnvError } from "./test_env_error.ts";

const crd = (plural: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.example.dev` },
  spec: { group: "example.dev", names: { plural, kind: "X" }, scope: "Namespaced", versions: [{ name: "v1" }] },
});

Deno.test("CRDs come from definitions, files of several documents and objects, in the order given", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/crds.yaml`;
    await Deno.writeTextFile(
      file,
      `${JSON.stringify(crd("as"))}\n---\n# a comment\n---\n${JSON.stringify(crd("bs"))}\n`,
    );
    const Thing = defineResource({
      group: "example.dev",
      version: "v1",
      kind: "Thing",
      plural: "things",
      spec: Type.Object({ size: Type.Integer() }),
    });
    const out = await crdManifests([Thing, file, new URL(`file://${file}`), crd("cs")]);
    assert.deepEqual(out.map((c) => c.metadata.name), [
      "things.example.dev",
      "as.example.dev",
      "bs.example.dev",
      "as.example.dev",
      "bs.example.dev",
      "cs.example.dev",
    ]);
    assert.equal(out[0].kind, "CustomResourceDefinition");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file that holds no CRD, something else or bad YAML, and an object that is not a CRD, are refused by name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/empty.yaml`, "# nothing\n");
    await Deno.writeTextFile(`${dir}/cm.yaml`, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
    await Deno.writeTextFile(`${dir}/bad.yaml`, "kind: [unclosed\n");
    await assert.rejects(crdManifests([`${dir}/empty.yaml`]), /empty.yaml holds no CustomResourceDefinition/);
    await assert.rejects(
      crdManifests([`${dir}/cm.yaml`]),
      /document 1 of .*cm.yaml is not a CustomResourceDefinition.*"ConfigMap"/,
    );
    await assert.rejects(crdManifests([`${dir}/bad.yaml`]), /bad.yaml is not valid YAML \(document 1\)/);
    await assert.rejects(crdManifests([`${dir}/missing.yaml`]), /could not read the CRD file .*missing.yaml/);
    await assert.rejects(crdManifests([{ kind: "CustomResourceDefinition" }]), TestEnvError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
