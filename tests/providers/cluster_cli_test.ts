// End-to-end: `deno task cluster:add` / `cluster:remove` against a fresh apiserver and the hub's cluster (prod).

import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { UUID_V4 } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import {
  FaultApiserver,
  KUBECONFIG_PATH,
  kubeconfigText,
  kubectlOk,
  localEndpoint,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";
import { waitTokenRejected } from "../support/revocable_token.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** Hang guard: each step takes a few seconds here; 90 s is far beyond 5× that. */
const HANG_GUARD_MS = 90_000;
const OURS = "app.kubernetes.io/managed-by=operator-hub-cluster-add";

/** Runs `deno task cluster:<command>` exactly as a user would. */
async function clusterTask(command: "add" | "remove", args: string[]): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command("deno", {
    args: ["task", "-q", `cluster:${command}`, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    signal: AbortSignal.timeout(HANG_GUARD_MS),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, out: d.decode(out.stdout) + d.decode(out.stderr) };
}

/** `default/NAME`'s status.uuid in the target once it has one, or "" after the hang guard. */
async function waitUuid(target: FaultApiserver, name: string): Promise<string> {
  const deadline = Date.now() + HANG_GUARD_MS;
  let uuid = "";
  while (!UUID_V4.test(uuid) && Date.now() < deadline) {
    uuid = (await target.kubectl(["get", "uuid", name, "-n", "default", "-o", "jsonpath={.status.uuid}"])).trim();
    if (!UUID_V4.test(uuid)) await new Promise((r) => setTimeout(r, 200));
  }
  return uuid;
}

/** The server, CA and token of the kubeconfig cluster:add registered for `cluster` in a Secret of prod. */
async function registeredKubeconfig(
  namespace: string,
  cluster: string,
): Promise<{ server: string; caPem: string; token: string }> {
  const data = await kubectlOk("prod", [
    "get",
    "secret",
    cluster,
    "-n",
    namespace,
    "-o",
    "jsonpath={.data.kubeconfig}",
  ]);
  const doc = parseYaml(atob(data.trim())) as {
    clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
    users: { user: { token: string } }[];
  };
  const { server, "certificate-authority-data": ca } = doc.clusters[0].cluster;
  assert.ok(server && ca, `the registered kubeconfig of ${cluster} names its server and CA`);
  return { server, caPem: atob(ca), token: doc.users[0].user.token };
}

/**
 * Every object cluster:add labels as its own, as `kind/name/phase/deletionTimestamp` (the phase is a namespace's; the
 * timestamp is set once the object was deleted and something, such as the apiserver's own finalizer, still holds it).
 */
async function leftovers(kubectl: (args: string[]) => Promise<string>): Promise<string[]> {
  const out = await kubectl([
    "get",
    "namespaces,serviceaccounts,secrets,clusterroles,clusterrolebindings,customresourcedefinitions",
    "-A",
    "-l",
    OURS,
    "-o",
    'jsonpath={range .items[*]}{.kind}/{.metadata.name}/{.status.phase}/{.metadata.deletionTimestamp}{"\\n"}{end}',
  ]);
  return out.split("\n").filter(Boolean);
}

Deno.test("cluster:add twice registers a fresh cluster through a Secret in the hub cluster (a Uuid there gets its UUID, the second run rotates the token without a relist), and cluster:remove --purge leaves nothing of it in either cluster", async () => {
  requireClusters();
  await using ns = await testNamespace("cluster-cli", { contexts: ["prod"] });
  await using dir = await tempDir("cluster-cli");
  const target = await FaultApiserver.start({ name: "cli-target", installCrds: false });
  const prod = localEndpoint("prod");
  const hubConfig = await dir.write(
    "hub.yaml",
    kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    // The Uuid operator only, as the shipped install runs it: cluster:add grants that operator's rights alone.
    args: [
      "--cluster-secrets",
      ns.name,
      "--cluster-dir",
      `${dir.path}/none`,
      "--namespace",
      "default",
      "--operators",
      "uuid",
    ],
  });
  const cli = [
    "--kubeconfig",
    target.adminKubeconfig,
    "--kubeconfig",
    KUBECONFIG_PATH,
    "--context",
    target.name,
    "--hub-context",
    "prod",
    "--secret-namespace",
    ns.name,
  ];
  try {
    await hub.waitReady(HANG_GUARD_MS);
    const dry = await clusterTask("add", [...cli, "--dry-run"]);
    assert.equal(dry.code, 0, dry.out);
    assert.match(dry.out, /would apply CustomResourceDefinition uuid\.demo\.operator/);
    assert.match(dry.out, /would create Secret .* in hub cluster "prod"/);
    assert.deepEqual(await leftovers((a) => target.kubectl(a)), [], "a dry run creates nothing");

    const first = await clusterTask("add", [...cli, "--token-ttl", "2h"]);
    assert.equal(first.code, 0, first.out);
    const served = await hub.waitStatus(
      (s) => s.clusters[target.name]?.state === "watching",
      HANG_GUARD_MS,
      "the added cluster watching",
    );
    assert.equal(served.clusters[target.name].provider, "secret");
    await target.kubectl(
      ["apply", "-f", "-"],
      "apiVersion: demo.operator/v1\nkind: Uuid\nmetadata: {name: added, namespace: default}\n",
    );
    assert.match(await waitUuid(target, "added"), UUID_V4);

    const before = (await hub.get("/status")).body.clusters[target.name];
    const firstRegistration = await registeredKubeconfig(ns.name, target.name);
    const second = await clusterTask("add", [...cli, "--token-ttl", "2h"]);
    assert.equal(second.code, 0, second.out);
    assert.match(second.out, /revoked 1 earlier token/);
    const after = (await hub.get("/status")).body.clusters[target.name];
    assert.equal(after.registeredAt, before.registeredAt, "a rotation is not a re-registration");
    assert.equal(after.relists, before.relists);
    assert.equal(after.connectAttempts, before.connectAttempts);
    assert.equal(after.lastError, null);
    // The hub still writes there after the first token was revoked: it uses the new one. The revocation is waited
    // for (the target refuses the first token) before the write, and the write is the hub's: the UUID it assigns.
    const secondRegistration = await registeredKubeconfig(ns.name, target.name);
    assert.notEqual(secondRegistration.token, firstRegistration.token, "the second run registered a new token");
    await waitTokenRejected(firstRegistration.server, firstRegistration.caPem, firstRegistration.token, HANG_GUARD_MS);
    await target.kubectl(
      ["apply", "-f", "-"],
      "apiVersion: demo.operator/v1\nkind: Uuid\nmetadata: {name: rotated, namespace: default}\n",
    );
    await hub.waitStatus((s) => s.clusters[target.name]?.objects === 2, HANG_GUARD_MS);
    assert.match(await waitUuid(target, "rotated"), UUID_V4);
    const anchors = await target.kubectl(["get", "secrets", "-n", "operator-hub", "-l", OURS, "-o", "name"]);
    assert.equal(anchors.trim().split("\n").length, 1, `one live token anchor: ${anchors}`);

    await target.kubectl(["delete", "uuid", "--all", "-n", "default"]);
    const removed = await clusterTask("remove", [...cli, "--purge"]);
    assert.equal(removed.code, 0, removed.out);
    await hub.waitStatus((s) => !(target.name in s.clusters), HANG_GUARD_MS, "the removed cluster gone");
    // Everything cluster:add created in the target was deleted. What the apiserver itself still holds is allowed:
    // the namespace stays Terminating (the private target runs no kube-controller-manager), and a deleted CRD waits
    // on the apiserver's customresourcecleanup finalizer, which can take minutes when the CRD's watch cache is still
    // (re)initializing (InstanceDeletionFailed, as operator-framework/operator-controller#1437 saw). Each of those
    // carries a deletionTimestamp; an object without one is something --purge did not delete, and any other kind
    // (ServiceAccounts, Secrets, RBAC objects: no finalizer of the apiserver's) must be gone.
    const held = (l: string) => /^(Namespace|CustomResourceDefinition)\//.test(l) && !l.endsWith("/");
    let left: string[] = [];
    const deadline = Date.now() + HANG_GUARD_MS;
    do {
      left = (await leftovers((a) => target.kubectl(a))).filter((l) => !held(l));
      if (left.length) await new Promise((r) => setTimeout(r, 500));
    } while (left.length && Date.now() < deadline);
    assert.deepEqual(left, [], "objects --purge left in the target");
    assert.deepEqual(await leftovers((a) => kubectlOk("prod", a)), []);
    assert.equal((await kubectlOk("prod", ["get", "secrets", "-n", ns.name, "-o", "name"])).trim(), "");
  } finally {
    await hub.stop();
    await target.destroy();
  }
});

Deno.test("cluster:add without --hub-context plans a kubeconfig file in the cluster folder (a dry run writes nothing and prints no credential); bad flags exit 2", async () => {
  requireClusters();
  await using dir = await tempDir("cluster-cli-file");
  const bad = await clusterTask("add", ["--context", "prod", "--token-ttl", "soon"]);
  assert.equal(bad.code, 2);
  assert.match(bad.out.trim().split("\n").at(-1)!, /invalid --token-ttl "soon"/);
  const unknown = await clusterTask("add", ["--kubeconfig", KUBECONFIG_PATH, "--context", "nowhere"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.out, /unknown context "nowhere"/);
  const r = await clusterTask("add", [
    "--kubeconfig",
    KUBECONFIG_PATH,
    "--context",
    "dev",
    "--name",
    "dev-copy",
    "--cluster-dir",
    dir.path,
    "--dry-run",
  ]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`would write ${dir.path}/dev-copy\\.yaml`));
  const written = await Deno.stat(`${dir.path}/dev-copy.yaml`).catch(() => undefined);
  assert.equal(written, undefined, "a dry run writes no file");
  assert.ok(!r.out.includes(localEndpoint("dev").token), "no credential printed");
});

/** kubectl with only `kubeconfig` (a registration file), as the hub would use it. */
async function kubectlAs(kubeconfig: string, args: string[]): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command("kubectl", {
    args: [`--kubeconfig=${kubeconfig}`, ...args],
    stdin: "null",
    signal: AbortSignal.timeout(HANG_GUARD_MS),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, out: d.decode(out.stdout) + d.decode(out.stderr) };
}

Deno.test("cluster:add --non-expiring registers a local cluster with a service-account-token Secret's token (no expiry), and cluster:remove --purge revokes it and leaves nothing labelled", async () => {
  requireClusters();
  await using dir = await tempDir("cluster-cli-non-expiring");
  const name = `dev-${crypto.randomUUID().slice(0, 8)}`;
  const cli = ["--kubeconfig", KUBECONFIG_PATH, "--context", "dev", "--name", name, "--cluster-dir", dir.path];
  const dev = (args: string[]) => kubectlOk("dev", args);
  assert.deepEqual(await leftovers(dev), [], "nothing of an earlier cluster:add in dev");
  const added = await clusterTask("add", [...cli, "--non-expiring"]);
  assert.equal(added.code, 0, added.out);
  // The dev cluster's kube-controller-manager runs the token controller, which fills the Secret.
  assert.match(added.out, /applied Secret operator-hub\/operator-hub-token \(non-expiring token, new\)/);
  assert.ok(!added.out.includes("TokenRequest") && !/bound to it/.test(added.out), added.out);
  const file = `${dir.path}/${name}.yaml`;
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const doc = parseYaml(await Deno.readTextFile(file));
  assert.equal(doc["current-context"], name);
  const token: string = doc.users[0].user.token;
  assert.ok(!added.out.includes(token), "the token is not printed");
  const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
  assert.equal(claims.exp, undefined, "a token Secret's token does not expire");
  assert.equal(claims["kubernetes.io/serviceaccount/secret.name"], "operator-hub-token");

  const who = await kubectlAs(file, ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
  assert.equal(who.out.trim(), "system:serviceaccount:operator-hub:operator-hub", who.out);
  const list = await kubectlAs(file, ["get", "uuid", "-A", "-o", "name"]);
  assert.equal(list.code, 0, `the least-privilege identity may list Uuids: ${list.out}`);

  const removed = await clusterTask("remove", [...cli, "--purge"]);
  assert.equal(removed.code, 0, removed.out);
  assert.equal(await Deno.stat(file).catch(() => undefined), undefined, "the registration file is gone");
  // Hang guard on the namespace's deletion (dev runs the namespace controller): then nothing of ours is left.
  let left: string[] = [];
  const deadline = Date.now() + HANG_GUARD_MS;
  do {
    left = await leftovers(dev);
    if (left.length) await new Promise((r) => setTimeout(r, 500));
  } while (left.length && Date.now() < deadline);
  assert.deepEqual(left, []);
  // The same kubeconfig again: its token died with its Secret. The apiserver caches a token's successful
  // authentication for 10 s, so the answer turns Unauthorized within that (the deadline is a hang guard).
  await Deno.writeTextFile(`${dir.path}/revoked.yaml`, JSON.stringify(doc), { mode: 0o600 });
  let revoked = await kubectlAs(`${dir.path}/revoked.yaml`, ["get", "uuid", "-A"]);
  while (!/Unauthorized|must be logged in/.test(revoked.out) && Date.now() < deadline + HANG_GUARD_MS) {
    await new Promise((r) => setTimeout(r, 500));
    revoked = await kubectlAs(`${dir.path}/revoked.yaml`, ["get", "uuid", "-A"]);
  }
  assert.notEqual(revoked.code, 0);
  assert.match(revoked.out, /Unauthorized|must be logged in/);
});
