// End-to-end: clusters registered while the hub runs, through a kubeconfig file and through a labelled Secret.

import assert from "node:assert/strict";
import { UUID_V4 } from "../../dev/support/cluster_api.ts";
import { HubProcess, runHubCli } from "../../dev/support/hub_process.ts";
import {
  kubeconfigText,
  kubectl,
  kubectlOk,
  localEndpoint,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";
import { metricSeries, parseMetrics } from "../support/prometheus_text.ts";
import { mintRevocableToken, type RevocableToken, revokeToken } from "../support/revocable_token.ts";

/** Hang guard: registration normally takes well under 2 s here; 60 s is far beyond 5× the median. */
const HANG_GUARD_MS = 60_000;

function alias(prefix: string): string {
  return `${prefix}-${crypto.getRandomValues(new Uint32Array(1))[0].toString(36)}`;
}

/** A kubeconfig for `context` of the local clusters, with the context renamed and `token` as its credential. */
function kubeconfigFor(context: string, name: string, token?: string): string {
  const c = localEndpoint(context);
  return kubeconfigText([{ name, server: c.server, caPem: c.caPem, user: { token: token ?? c.token } }]);
}

/**
 * Second valid credentials for a local cluster: TokenRequest tokens of a cluster-admin ServiceAccount, each bound to
 * its own Secret, so that `revoke` invalidates one token (and waits until the apiserver refuses it) and no other.
 */
async function extraToken(
  context: string,
  namespace: string,
): Promise<{
  token: () => Promise<RevocableToken>;
  revoke: (t: RevocableToken) => Promise<void>;
  done: () => Promise<void>;
}> {
  const sa = "rotation";
  const crb = `${namespace}-rotation`;
  await kubectlOk(context, ["create", "serviceaccount", sa, "-n", namespace]);
  await kubectlOk(context, [
    "create",
    "clusterrolebinding",
    crb,
    "--clusterrole=cluster-admin",
    `--serviceaccount=${namespace}:${sa}`,
  ]);
  return {
    token: () => mintRevocableToken(context, namespace, sa),
    revoke: (t) => {
      const c = localEndpoint(context);
      return revokeToken(context, namespace, t, { url: c.server, caPem: c.caPem }, HANG_GUARD_MS);
    },
    done: async () => void await kubectl(context, ["delete", "clusterrolebinding", crb, "--ignore-not-found"]),
  };
}

async function applyUuid(context: string, namespace: string, name: string): Promise<void> {
  await kubectlOk(context, ["apply", "-f", "-"], {
    stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`,
  });
}

async function waitUuid(context: string, namespace: string, name: string): Promise<string> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (Date.now() < deadline) {
    const r = await kubectl(context, ["get", "uuid", name, "-n", namespace, "-o", "jsonpath={.status.uuid}"]);
    if (UUID_V4.test(r.stdout.trim())) return r.stdout.trim();
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Uuid ${context}/${namespace}/${name} got no UUID within the hang guard`);
}

async function seriesFor(hub: HubProcess, cluster: string): Promise<string[]> {
  return (await hub.get("/metrics")).text.split("\n").filter((l) => l.includes(`cluster="${cluster}"`));
}

/**
 * A registered cluster has its /status entry in `state` and its series: hub_cluster_state says so, and more series
 * carry its name. Checked before a removal, so that "no series left" afterwards cannot pass vacuously.
 */
async function assertSeriesWhileRegistered(hub: HubProcess, cluster: string, state: string): Promise<void> {
  assert.equal((await hub.get("/status")).body.clusters[cluster]?.state, state, `${cluster} in /status`);
  const metrics = (await hub.get("/metrics")).text;
  assert.equal(metricSeries(parseMetrics(metrics), "hub_cluster_state", { cluster, state }), 1);
  assert.ok((await seriesFor(hub, cluster)).length > 1, `${cluster} has series while registered`);
}

Deno.test("A kubeconfig file dropped into --cluster-dir is served without a restart, its rotated token is swapped in place, a later file with the same name is ignored and named, and removing the file disengages it leak-free", async () => {
  requireClusters();
  await using ns = await testNamespace("folder-provider", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("folder-provider");
  const clusterDir = `${dir.path}/clusters`;
  await Deno.mkdir(clusterDir);
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod"));
  const rotation = await extraToken("staging", ns.name);
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-dir", clusterDir, "--namespace", ns.name],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    const name = alias("dropped");
    const file = `${clusterDir}/${name}.yaml`;
    // Written elsewhere and renamed in, as `cp` into a watched folder should be done (an atomic appearance).
    const firstToken = await rotation.token();
    await Deno.writeTextFile(`${dir.path}/staged.yaml`, kubeconfigFor("staging", name, firstToken.token));
    await Deno.rename(`${dir.path}/staged.yaml`, file);
    const watching = await hub.waitStatus(
      (s) => s.clusters[name]?.state === "watching",
      HANG_GUARD_MS,
      `${name} watching`,
    );
    assert.equal(watching.clusters[name].provider, "folder");
    assert.ok(!Number.isNaN(Date.parse(watching.clusters[name].registeredAt)));
    assert.match((await hub.get("/metrics")).text, /hub_clusters_registered\{provider="folder"\} 2/);
    await applyUuid("staging", ns.name, "first");
    await waitUuid("staging", ns.name, "first");

    // Credentials-only change: a new token for the same server and CA.
    const before = (await hub.get("/status")).body.clusters[name];
    await dir.write(`clusters/${name}.yaml`, kubeconfigFor("staging", name, (await rotation.token()).token));
    const swapped = hub.logs.length;
    await hub.waitStatus(
      () =>
        hub.logs.slice(swapped - 1).some((l) =>
          l.includes("cluster credentials replaced in place") && l.includes(name)
        ),
      HANG_GUARD_MS,
      "the credential swap",
    );
    // The old token is revoked (refused by staging) before the next write: only the new token can make it.
    await rotation.revoke(firstToken);
    await applyUuid("staging", ns.name, "second");
    await waitUuid("staging", ns.name, "second");
    const after = (await hub.get("/status")).body.clusters[name];
    assert.equal(after.registeredAt, before.registeredAt, "not re-engaged");
    assert.equal(after.relists, before.relists, "no relist");
    assert.equal(after.connectAttempts, before.connectAttempts, "no watch restart");
    assert.equal(after.lastError, null);

    // The same name from a second file: the first file keeps the cluster, the copy is ignored and named.
    await dir.write(`clusters/${name}-copy.yaml`, kubeconfigFor("staging", name));
    const clash = await hub.waitStatus(
      (s) => s.providers.folder.errors.some((e: { cluster?: string }) => e.cluster === name),
      HANG_GUARD_MS,
      "the copy shown as a collision",
    );
    const shown = clash.providers.folder.errors.find((e: { cluster?: string }) => e.cluster === name);
    assert.match(shown.source, new RegExp(`/${name}-copy\\.yaml$`));
    assert.match(
      shown.error,
      new RegExp(`already registered by folder [^ ]*/${name}\\.yaml; folder [^ ]*/${name}-copy`),
    );
    assert.equal(clash.clusters[name].state, "watching", "the first file keeps serving");
    assert.equal(clash.clusters[name].registeredAt, before.registeredAt, "not re-engaged by the copy");
    await Deno.remove(`${clusterDir}/${name}-copy.yaml`);
    await hub.waitStatus((s) => s.providers.folder.errors.length === 0, HANG_GUARD_MS, "the copy's line gone");

    // While engaged, the cluster has its status entry and its series: their absence below means something.
    await assertSeriesWhileRegistered(hub, name, "watching");
    await Deno.remove(file);
    await hub.waitStatus((s) => !(name in s.clusters), HANG_GUARD_MS, `${name} gone`);
    assert.deepEqual(await seriesFor(hub, name), []);
    assert.equal((await hub.get("/status")).body.clusters.prod.state, "watching");
  } finally {
    await hub.stop();
    await rotation.done();
  }
});

Deno.test("A labelled kubeconfig Secret in the --cluster-secrets namespace registers a cluster named after it; a new token is swapped in; a later file with its name is ignored and named, a Secret without its key and one that does not parse are errors on its name and in /status' providers section (naming the Secret, never its content); deleting it disengages", async () => {
  requireClusters();
  await using ns = await testNamespace("secret-provider", { contexts: ["prod", "dev"] });
  await using dir = await tempDir("secret-provider");
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod"));
  const rotation = await extraToken("dev", ns.name);
  const name = alias("from-secret");
  const secret = (kubeconfig: string | undefined) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns.name, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
      ...(kubeconfig === undefined ? {} : { data: { kubeconfig: btoa(kubeconfig) } }),
    });
  const clusterDir = `${dir.path}/clusters`;
  await Deno.mkdir(clusterDir);
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-secrets", ns.name, "--cluster-dir", clusterDir, "--namespace", ns.name],
  });
  try {
    // Readiness waits for every provider's first read: the document that says ready shows the Secrets listed.
    const providers = (await hub.waitStatus((s) => s.ready === true, HANG_GUARD_MS, "readiness")).providers;
    assert.equal(providers.secret.synced, true);
    assert.equal(providers.secret.state, "watching");
    assert.deepEqual(providers.secret.watches, [`prod:${ns.name}`]);
    assert.ok(providers.folder.watches.includes(clusterDir), JSON.stringify(providers.folder));
    const firstToken = await rotation.token();
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secret(kubeconfigFor("dev", "anything", firstToken.token)),
    });
    const watching = await hub.waitStatus(
      (s) => s.clusters[name]?.state === "watching",
      HANG_GUARD_MS,
      `${name} watching`,
    );
    assert.equal(watching.clusters[name].provider, "secret");
    await applyUuid("dev", ns.name, "via-secret");
    await waitUuid("dev", ns.name, "via-secret");

    const before = (await hub.get("/status")).body.clusters[name];
    const mark = hub.logs.length;
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secret(kubeconfigFor("dev", "anything", (await rotation.token()).token)),
    });
    await hub.waitStatus(
      () => hub.logs.slice(mark).some((l) => l.includes("cluster credentials replaced in place") && l.includes(name)),
      HANG_GUARD_MS,
      "the credential swap",
    );
    const after = (await hub.get("/status")).body.clusters[name];
    assert.equal(after.registeredAt, before.registeredAt);
    assert.equal(after.relists, before.relists);
    assert.equal(after.connectAttempts, before.connectAttempts);
    // The old token is revoked (refused by dev) before the next write: only the new token can make it.
    await rotation.revoke(firstToken);
    await applyUuid("dev", ns.name, "after-swap");
    await waitUuid("dev", ns.name, "after-swap");

    // The same name from a file too: the Secret registered it first and keeps it; the file is ignored and named.
    await dir.write(`clusters/${name}.yaml`, kubeconfigFor("dev", name));
    const clash = await hub.waitStatus((s) => s.providers.folder.errors.length > 0, HANG_GUARD_MS, "the file's line");
    assert.match(
      clash.providers.folder.errors[0].error,
      new RegExp(`name collision: cluster "${name}" is already registered by secret ${ns.name}/${name}`),
    );
    assert.deepEqual(clash.providers.secret.errors, [], "the Secret that registered first shows no error");
    assert.equal(clash.clusters[name].state, "watching");
    assert.equal(clash.clusters[name].provider, "secret");
    await Deno.remove(`${clusterDir}/${name}.yaml`);
    await hub.waitStatus((s) => s.providers.folder.errors.length === 0, HANG_GUARD_MS, "the file's line gone");

    await kubectlOk("prod", ["replace", "-f", "-"], { stdin: secret(undefined) });
    const broken = await hub.waitStatus((s) => s.clusters[name]?.state === "registering", HANG_GUARD_MS);
    assert.match(broken.clusters[name].lastError, /has no data key "kubeconfig"/);
    assert.deepEqual(broken.providers.secret.errors, [
      { source: `${ns.name}/${name}`, cluster: name, error: broken.clusters[name].lastError },
    ]);

    // A kubeconfig that does not parse: named by its Secret, its content quoted nowhere.
    const content = `token: not-shown-${crypto.randomUUID()}`;
    await kubectlOk("prod", ["replace", "-f", "-"], { stdin: secret(`users: [${content}\n`) });
    const unparsable = await hub.waitStatus(
      (s) => /not valid YAML/.test(s.providers.secret.errors[0]?.error ?? ""),
      HANG_GUARD_MS,
      "the unparsable Secret reported",
    );
    assert.match(unparsable.providers.secret.errors[0].error, new RegExp(`secret ${ns.name}/${name}`));
    assert.equal(unparsable.clusters[name].lastError, unparsable.providers.secret.errors[0].error);
    const status = (await hub.get("/status")).text;
    assert.ok(!status.includes(content.slice(7)), "the Secret's content is not in /status");

    // While registered (here as an error), the name has its status entry; an untrusted cluster the hub cannot reach
    // has no series of its own, it is counted by provider and state: that count going down below means something.
    assert.equal((await hub.get("/status")).body.clusters[name]?.state, "registering", `${name} in /status`);
    const held = () =>
      hub.get("/metrics").then((m) =>
        metricSeries(parseMetrics(m.text), "hub_clusters_by_state", { provider: "secret", state: "registering" })
      );
    assert.equal(await held(), 1);
    assert.deepEqual(await seriesFor(hub, name), [], "no series names a held Secret's cluster");
    await kubectlOk("prod", ["delete", "secret", name, "-n", ns.name]);
    await hub.waitStatus((s) => !(name in s.clusters), HANG_GUARD_MS, `${name} gone`);
    assert.equal(await held(), 0);
    assert.deepEqual(await seriesFor(hub, name), []);
    for (const line of hub.logs) assert.ok(!line.includes(localEndpoint("dev").token), "no token in the logs");
  } finally {
    await hub.stop();
    await rotation.done();
  }
});

Deno.test("--clusters naming a context no source defines still exits 2 without --cluster-secrets, and waits as registering with it; Secrets the hub may not list show as a forbidden provider in /status", async () => {
  requireClusters();
  await using dir = await tempDir("selection");
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod"));
  const exit = await runHubCli(["--kubeconfig", hubConfig, "--clusters", "prod,ghost"]);
  assert.equal(exit.code, 2, exit.stderr);
  assert.match(exit.stderr, /unknown context "ghost" in --clusters; known contexts: prod/);
  await using ns = await testNamespace("selection", { contexts: ["prod"] });
  // An identity with what the Uuid operator needs and no access to Secrets (the namespaced Role left out); the hub
  // runs the Uuid operator only, as the Mirror needs Secrets.
  const role = `${ns.name}-no-secrets`;
  await kubectlOk("prod", ["create", "serviceaccount", "hub", "-n", ns.name]);
  await kubectlOk("prod", [
    "create",
    "clusterrole",
    role,
    "--verb=get,list,watch,create,update,patch",
    "--resource=uuid.demo.operator,uuid.demo.operator/status,events",
  ]);
  await kubectlOk("prod", [
    "create",
    "clusterrolebinding",
    role,
    `--clusterrole=${role}`,
    `--serviceaccount=${ns.name}:hub`,
  ]);
  const token = (await kubectlOk("prod", ["create", "token", "hub", "-n", ns.name, "--duration=1h"])).trim();
  const hub = HubProcess.start({
    clusters: ["prod", "ghost"],
    kubeconfigs: [await dir.write("restricted.yaml", kubeconfigFor("prod", "prod", token))],
    args: ["--cluster-secrets", ns.name, "--namespace", ns.name, "--operators", "uuid"],
  });
  try {
    const s = await hub.waitStatus(
      (s) => s.clusters.prod?.state === "watching" && s.clusters.ghost && s.providers?.secret?.state === "forbidden",
      HANG_GUARD_MS,
      "prod watching and the Secret provider forbidden",
    );
    assert.equal(s.clusters.ghost.state, "registering");
    assert.match(s.clusters.ghost.lastError, /selected by --clusters but no provider registers it yet/);
    assert.equal(s.ready, false);
    assert.deepEqual(s.notReady, ["ghost", "secret provider"]);
    assert.equal(s.providers.secret.synced, false);
    assert.match(s.providers.secret.lastError, /secrets is forbidden/);
    assert.ok(!JSON.stringify(s).includes(token), "no token in /status");
  } finally {
    await hub.stop();
    await kubectl("prod", ["delete", `clusterrolebinding/${role}`, `clusterrole/${role}`, "--ignore-not-found"]);
  }
});
