// Tests of the finalizer cleanup: the targets and the summary line (pure), and removals against the local prod cluster.
import assert from "node:assert/strict";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import type { KubeClient, ResourceType } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { cleanupLine, cleanupTargets, removeFinalizers } from "./finalizer_cleanup.ts";

const UUID: ResourceType = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };
const MIRRORS: ResourceType = { group: "demo.operator", version: "v1", kind: "Mirror", plural: "mirrors" };

const op = (resource: ResourceType, finalizers?: string[]) =>
  ({ name: resource.plural, resource, finalizers }) as Operator;

Deno.test("cleanupTargets() lists every operator's resource once, each with every declared finalizer and the extra ones", () => {
  const targets = cleanupTargets([op(UUID), op(MIRRORS, ["hub/mirror"]), op(UUID, ["hub/uuid"])], ["hub/handlers"]);
  assert.deepEqual(targets.map((t) => t.type.plural), ["uuid", "mirrors"]);
  for (const t of targets) assert.deepEqual(t.finalizers, ["hub/handlers", "hub/mirror", "hub/uuid"]);
});

Deno.test("cleanupLine() says what was removed in one line, singular or plural, with the failure when there was one", () => {
  assert.equal(
    cleanupLine({ cluster: "prod", objects: 3, finalizers: 3 }),
    "prod: removed 3 finalizers from 3 objects",
  );
  assert.equal(cleanupLine({ cluster: "dev", objects: 1, finalizers: 1 }), "dev: removed 1 finalizer from 1 object");
  assert.equal(
    cleanupLine({ cluster: "edge", objects: 0, finalizers: 0, error: "connection refused" }),
    "edge: removed 0 finalizers from 0 objects; failed: connection refused",
  );
});

async function createUuid(client: KubeClient, namespace: string, name: string, finalizers: string[]) {
  await client.request("POST", `/apis/demo.operator/v1/namespaces/${namespace}/uuid`, {
    body: { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name, namespace, finalizers }, spec: {} },
  });
}

async function finalizersOf(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const o = await client.request<{ metadata: { finalizers?: string[] } }>(
    "GET",
    `/apis/demo.operator/v1/namespaces/${namespace}/uuid/${name}`,
  );
  return o.metadata.finalizers ?? [];
}

Deno.test("removeFinalizers() removes only the hub's finalizers, wherever they sit in the list, and skips a resource the cluster does not serve", () =>
  inLocalNamespace("prod", "finalizer-cleanup", async (client, namespace) => {
    await createUuid(client, namespace, "mixed", ["a.example/first", "hub/handlers", "b.example/mid", "hub/mirror"]);
    await createUuid(client, namespace, "only-hub", ["hub/handlers"]);
    await createUuid(client, namespace, "foreign", ["a.example/first"]);
    const missing: ResourceType = { group: "nothing.example", version: "v1", kind: "Nothing", plural: "nothings" };
    const result = await removeFinalizers(client, [
      { type: missing, finalizers: ["hub/handlers"] },
      { type: UUID, finalizers: ["hub/handlers", "hub/mirror"] },
    ], { namespaces: [namespace] });
    try {
      assert.deepEqual(result, { cluster: "prod", objects: 2, finalizers: 3 });
      assert.deepEqual(await finalizersOf(client, namespace, "mixed"), ["a.example/first", "b.example/mid"]);
      assert.deepEqual(await finalizersOf(client, namespace, "only-hub"), []);
      assert.deepEqual(await finalizersOf(client, namespace, "foreign"), ["a.example/first"]);
    } finally {
      for (const name of ["mixed", "foreign"]) {
        await client.request("PATCH", `/apis/demo.operator/v1/namespaces/${namespace}/uuid/${name}`, {
          body: { metadata: { finalizers: null } },
        });
      }
    }
  }));
