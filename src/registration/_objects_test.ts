// Tests of cluster:add's object helpers against the real local apiserver (context prod), in a namespace of the
// test's own: ownership labels on server-side apply, tolerant reads and deletes.
import assert from "node:assert/strict";
import { inLocalNamespace } from "../../dev/support/local_client.ts";
import { ApiError, type KubeClient } from "../kube/mod.ts";
import {
  applyOwned,
  deleteIgnoringMissing,
  getOrUndefined,
  listOrEmpty,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type Obj,
  pathOf,
  RegistrationError,
} from "./_objects.ts";

/** Runs `fn` with a client for prod and a fresh namespace there; the namespace is deleted afterwards. */
function inNamespace(fn: (client: KubeClient, ns: string) => Promise<void>): Promise<void> {
  return inLocalNamespace("prod", "registration-objects", fn);
}

const serviceAccount = (name: string, namespace: string, labels: Record<string, string> = {}): Obj => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  metadata: { name, namespace, labels },
});

Deno.test("applyOwned creates an object labelled as cluster:add's, and recognises it on the next run", () =>
  inNamespace(async (client, ns) => {
    const doc = serviceAccount("hub-reader", ns, { team: "a" });
    assert.equal(await applyOwned(client, doc, false), "new");
    const sa = await client.request<Obj>("GET", pathOf(doc));
    assert.equal(sa.metadata.labels[MANAGED_BY_LABEL], MANAGED_BY);
    assert.equal(sa.metadata.labels.team, "a");
    assert.equal(doc.metadata.labels[MANAGED_BY_LABEL], undefined, "the caller's document is not changed");
    assert.equal(await applyOwned(client, doc, false), "made by an earlier cluster:add");
    assert.equal(
      (await listOrEmpty(client, `/api/v1/namespaces/${ns}/serviceaccounts`, `${MANAGED_BY_LABEL}=${MANAGED_BY}`))
        .length,
      1,
    );
  }));

Deno.test("applyOwned updates an object the user made but leaves it unlabelled, so --purge keeps it", () =>
  inNamespace(async (client, ns) => {
    const doc = serviceAccount("users-own", ns);
    await client.request("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { body: doc });
    const applied = { ...doc, metadata: { ...doc.metadata, annotations: { "operator-hub/added": "yes" } } };
    assert.equal(await applyOwned(client, applied, false), "existed before: not ours, left out of --purge");
    const sa = await client.request<Obj>("GET", pathOf(doc));
    assert.equal(sa.metadata.annotations?.["operator-hub/added"], "yes", "updated");
    assert.equal(sa.metadata.labels?.[MANAGED_BY_LABEL], undefined, "not labelled as ours");
  }));

Deno.test("applyOwned with dryRun reports what it would do and writes nothing", () =>
  inNamespace(async (client, ns) => {
    const doc = serviceAccount("dry", ns);
    assert.equal(await applyOwned(client, doc, true), "new");
    assert.equal(await getOrUndefined(client, pathOf(doc)), undefined);
  }));

Deno.test("getOrUndefined, listOrEmpty and deleteIgnoringMissing treat a 404 as absence", () =>
  inNamespace(async (client, ns) => {
    const doc = serviceAccount("to-delete", ns);
    assert.equal(await getOrUndefined(client, pathOf(doc)), undefined);
    assert.deepEqual(await listOrEmpty(client, "/apis/nope.operator-hub.test/v1/things", "a=b"), []);
    await applyOwned(client, doc, false);
    assert.equal((await getOrUndefined(client, pathOf(doc)))?.metadata.name, "to-delete");
    await deleteIgnoringMissing(client, pathOf(doc));
    assert.equal(await getOrUndefined(client, pathOf(doc)), undefined);
    await deleteIgnoringMissing(client, pathOf(doc));
  }));

Deno.test("The tolerant helpers still throw failures other than a 404", async () => {
  const forbidden = new ApiError({ method: "GET", path: "/x", status: 403 });
  const client = { request: () => Promise.reject(forbidden) } as unknown as KubeClient;
  await assert.rejects(getOrUndefined(client, "/x"), (err) => err === forbidden);
  await assert.rejects(listOrEmpty(client, "/x", "a=b"), (err) => err === forbidden);
  await assert.rejects(deleteIgnoringMissing(client, "/x"), (err) => err === forbidden);
});

Deno.test("pathOf gives each supported kind's path and refuses another kind, listing the supported ones", () => {
  assert.equal(pathOf(serviceAccount("a", "ns")), "/api/v1/namespaces/ns/serviceaccounts/a");
  assert.equal(
    pathOf({ kind: "ClusterRole", metadata: { name: "r" } }),
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/r",
  );
  assert.equal(
    pathOf({ kind: "CustomResourceDefinition", metadata: { name: "uuid.demo.operator" } }),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/uuid.demo.operator",
  );
  assert.throws(
    () => pathOf({ kind: "Deployment", metadata: { name: "d", namespace: "ns" } }),
    (err: Error) =>
      err instanceof RegistrationError &&
      err.message ===
        "cannot install a Deployment: only Namespace, ServiceAccount, Secret, ClusterRole, ClusterRoleBinding, Role, RoleBinding, CustomResourceDefinition",
  );
});
