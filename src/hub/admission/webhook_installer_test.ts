// Unit tests for the installer's pure parts (its work against apiservers is tests/admission_test.ts): the RBAC it
// pre-flights, and the registry target that removes a removed cluster's configurations.
import assert from "node:assert/strict";
import type { ClusterAccess } from "../../kube/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import type { EngageTarget } from "../providers/mod.ts";
import { installerPermissions, removingWebhooks, WebhookInstaller } from "./webhook_installer.ts";

Deno.test("installerPermissions() asks for get/list/watch/create/patch/delete on both kinds, cluster-wide", () => {
  const checks = installerPermissions();
  assert.equal(checks.length, 12);
  for (const resource of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
    const verbs = checks.filter((c) => c.resource === resource).map((c) => c.verb).sort();
    assert.deepEqual(verbs, ["create", "delete", "get", "list", "patch", "watch"]);
  }
  assert.ok(checks.every((c) => c.group === "admissionregistration.k8s.io" && c.namespace === undefined));
});

Deno.test("removingWebhooks() passes every call on, and a removal reaches the installer after the target's", async () => {
  const calls: string[] = [];
  const target: EngageTarget = {
    engage: (name) => (calls.push(`engage ${name}`), Promise.resolve()),
    disengage: (name) => (calls.push(`disengage ${name}`), Promise.resolve()),
    hold: (name) => void calls.push(`hold ${name}`),
    removed: (name) => (calls.push(`removed ${name}`), Promise.resolve()),
  };
  const installer = new WebhookInstaller({
    hubName: "t",
    operators: [],
    namespaces: [],
    caBundle: () => "",
    endpointFor: () => ({ url: "https://127.0.0.1:1" }),
    logger: silentLogger(),
  });
  let removedFrom = "";
  installer.remove = (name: string) => {
    removedFrom = name;
    calls.push(`installer ${name}`);
    return Promise.resolve(0);
  };
  const wrapped = removingWebhooks(target, installer, silentLogger());
  await wrapped.engage("a", {} as ClusterAccess, { provider: "folder" } as never);
  await wrapped.disengage("a");
  wrapped.hold("a", undefined);
  await wrapped.removed!("a", {} as ClusterAccess);
  assert.deepEqual(calls, ["engage a", "disengage a", "hold a", "removed a", "installer a"]);
  assert.equal(removedFrom, "a");
});
