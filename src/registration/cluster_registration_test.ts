// Tests of cluster:add and cluster:remove against the real local apiserver (context prod): read-only dry runs, and
// registration Secrets in a namespace of the test's own. Real registrations (which install cluster-scoped objects) are
// tested on a private apiserver in tests/providers/cluster_cli_test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { KUBECONFIG_PATH } from "../../dev/clusters/clusters.ts";
import { inLocalNamespace, withTempDir } from "../../dev/support/local_client.ts";
import { type ClusterAccess, loadContexts } from "../kube/mod.ts";
import {
  addCluster,
  CLUSTER_LABEL,
  KUBECONFIG_SECRET_LABEL,
  RegistrationError,
  removeCluster,
} from "./cluster_registration.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

async function prod(): Promise<ClusterAccess> {
  return (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"])[0];
}

Deno.test("addCluster --dry-run prints every step as 'would …', writes nothing and prints no credential", () =>
  withTempDir(async (dir) => {
    const target = await prod();
    const lines: string[] = [];
    await addCluster({
      target,
      name: "dry-edge",
      registration: { kind: "file", dir },
      dryRun: true,
      root: ROOT,
      print: (l) => lines.push(l),
    });
    assert.ok(lines.some((l) => /^would apply CustomResourceDefinition /.test(l)), lines.join("\n"));
    assert.ok(lines.some((l) => /^would apply ClusterRole /.test(l)));
    assert.ok(
      lines.some((l) => /^would create Secret operator-hub\/operator-hub-token-dry-edge-\w+ .*\(8760h\)$/.test(l)),
    );
    assert.ok(
      lines.includes(
        `would write ${join(dir, "dry-edge.yaml")} (mode 0600; the hub's folder provider registers "dry-edge")`,
      ),
    );
    for (const l of lines) assert.match(l, /^would /, `a dry run only says what it would do: ${l}`);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no file written");
    const headers = (await target.auth()).headers;
    const authorization = Object.entries(headers).find(([k]) => k.toLowerCase() === "authorization")?.[1] ?? "";
    const credential = authorization.replace(/^Bearer /, "");
    assert.ok(credential.length > 8, "the local prod context authenticates with a bearer token");
    for (const l of lines) assert.ok(!l.includes(credential), "the admin token is never printed");
  }));

Deno.test("addCluster --dry-run to a Secret refuses a missing namespace and a Secret that is not a registration", () =>
  inLocalNamespace("prod", "registration", async (client, ns) => {
    const target = await prod();
    const base = { target, name: "edge", dryRun: true, root: ROOT, print: () => {} };
    await assert.rejects(
      addCluster({ ...base, registration: { kind: "secret", hub: target, namespace: `${ns}-missing` } }),
      (err: Error) =>
        err instanceof RegistrationError && err.message.includes(`namespace "${ns}-missing" does not exist`),
    );
    await client.request("POST", `/api/v1/namespaces/${ns}/secrets`, { body: { metadata: { name: "edge" } } });
    await assert.rejects(
      addCluster({ ...base, registration: { kind: "secret", hub: target, namespace: ns } }),
      (err: Error) =>
        err instanceof RegistrationError && /not a cluster registration; choose another --name/.test(err.message),
    );
    const lines: string[] = [];
    await addCluster({
      ...base,
      name: "fresh",
      registration: { kind: "secret", hub: target, namespace: ns },
      print: (l) => lines.push(l),
    });
    assert.ok(
      lines.includes(
        `would create Secret ${ns}/fresh in hub cluster "prod" (label ${KUBECONFIG_SECRET_LABEL}=true, data key kubeconfig)`,
      ),
    );
  }));

Deno.test("removeCluster deletes a registration Secret, leaves a Secret that is not one, and says when there is none", () =>
  inLocalNamespace("prod", "registration-remove", async (client, ns) => {
    const hub = await prod();
    const secrets = `/api/v1/namespaces/${ns}/secrets`;
    await client.request("POST", secrets, {
      body: { metadata: { name: "edge", labels: { [KUBECONFIG_SECRET_LABEL]: "true", [CLUSTER_LABEL]: "edge" } } },
    });
    await client.request("POST", secrets, { body: { metadata: { name: "plain" } } });
    const lines: string[] = [];
    const remove = (name: string, dryRun = false) =>
      removeCluster({
        name,
        registration: { kind: "secret", hub, namespace: ns },
        dryRun,
        print: (l) => lines.push(l),
      });
    await remove("edge", true);
    assert.equal(
      (await client.request<{ metadata: { name: string } }>("GET", `${secrets}/edge`)).metadata.name,
      "edge",
    );
    await remove("edge");
    await assert.rejects(client.request("GET", `${secrets}/edge`), /404/);
    await assert.rejects(remove("plain"), RegistrationError);
    await client.request("GET", `${secrets}/plain`);
    await remove("never");
    assert.deepEqual(lines, [
      `would delete Secret ${ns}/edge in "prod"`,
      `deleted Secret ${ns}/edge in "prod"`,
      `no registration Secret ${ns}/never in "prod"`,
    ]);
  }));

Deno.test("removeCluster of a file registration deletes the file, keeps it on a dry run, and says when there is none", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "edge.yaml");
    await Deno.writeTextFile(path, "kubeconfig");
    const lines: string[] = [];
    const remove = (dryRun: boolean) =>
      removeCluster({ name: "edge", registration: { kind: "file", dir }, dryRun, print: (l) => lines.push(l) });
    await remove(true);
    assert.equal(await Deno.readTextFile(path), "kubeconfig");
    await remove(false);
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
    await remove(false);
    assert.deepEqual(lines, [`would delete ${path}`, `deleted ${path}`, `no registration file ${path}`]);
  }));
