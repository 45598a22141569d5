// End-to-end: the hub under exactly the permissions `deno task compile` bakes into the binary, logging in
// in-cluster with a real TokenRequest token (rotated underneath it) and with a kubeconfig from the Secret mount.

import assert from "node:assert/strict";
import { HUB_ENV } from "../../src/cli/permissions.ts";
import { freePort, HubProcess, runHubCli } from "../../dev/support/hub_process.ts";
import { apiserverCa, apiserverUrl, requireClusters, testNamespace } from "../support/mod.ts";
import {
  compilePermissions,
  deployOperatorArgs,
  flagValues,
  hubIdentity,
  mapPaths,
  METRICS_CERTS_DIR,
  MOUNT_DIR,
  remoteKubeconfig,
  ROOT,
  SERVICE_ACCOUNT_DIR,
  ServiceAccountDir,
  taskWords,
  tokenStatus,
} from "./_support.ts";
import { metricSum, parseMetrics } from "../support/prometheus_text.ts";
import { hostLibrary, imageAllocator, mappedJemalloc } from "../../dev/support/image_allocator.ts";
import { type ClusterApi, localApi, names, waitAllAssigned, waitFor } from "../../dev/support/cluster_api.ts";

const assigned = (api: ClusterApi, namespace: string, count: number, timeoutMs = 90_000) =>
  waitAllAssigned(api, namespace, count, timeoutMs);

function inClusterEnv(context: string): Record<string, string> {
  return { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: new URL(apiserverUrl(context)).port };
}

Deno.test("The compile task grants exactly what the hub reads: the image's three mount points, the variables a start-up reads, the hostname", async () => {
  const perms = compilePermissions();
  const words = taskWords("compile");
  assert.deepEqual(words.slice(0, 2), ["deno", "compile"]);
  assert.equal(words.at(-1), "src/cli/main.ts");
  assert.equal(words[words.indexOf("--output") + 1], "dist/operator-hub");
  assert.ok(words.includes("--no-prompt"), "a missing permission must fail, never prompt");
  assert.deepEqual(flagValues(perms, "--allow-read"), [MOUNT_DIR, SERVICE_ACCOUNT_DIR, METRICS_CERTS_DIR]);
  // The variables: those a start-up under exactly these permissions reads, recorded by Deno's own permission audit
  // (every env access, granted or not). The start-up reads the most: no --kubeconfig, no $KUBECONFIG (so
  // ~/.kube/config via $HOME), the Secret mount in ./clusters as in the image, and in-cluster; it then stops at the
  // missing service-account token (exit 2), before any client exists.
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-env-" });
  try {
    Deno.mkdirSync(`${tmp}/clusters`);
    Deno.mkdirSync(`${tmp}/sa`);
    const audit = `${tmp}/audit.jsonl`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...mapPaths(perms, { [MOUNT_DIR]: `${tmp}/clusters`, [SERVICE_ACCOUNT_DIR]: `${tmp}/sa` }),
        `${ROOT}src/cli/main.ts`,
        "--clusters",
        "in-cluster",
        "--service-account-dir",
        `${tmp}/sa`,
      ],
      cwd: tmp,
      clearEnv: true,
      env: {
        ...ambientEnv(),
        KUBERNETES_SERVICE_HOST: "127.0.0.1",
        KUBERNETES_SERVICE_PORT: "443",
        HOME: tmp,
        DENO_DIR: await denoDir(),
        NO_COLOR: "1",
        DENO_AUDIT_PERMISSIONS: audit,
      },
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, /cannot use "in-cluster": .*token: not found/);
    const read = new Set(
      Deno.readTextFileSync(audit).trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.permission === "env")
        .map((e) => e.value),
    );
    assert.deepEqual(new Set(flagValues(perms, "--allow-env")), read, "--allow-env = the variables read");
    assert.deepEqual(new Set(HUB_ENV), read, "HUB_ENV = the variables read");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
  assert.deepEqual(flagValues(perms, "--allow-sys"), ["hostname"]);
  assert.deepEqual(flagValues(perms, "--allow-net"), [], "clusters are only known at run time");
  for (const absent of ["--allow-run", "--allow-write", "--allow-ffi", "--allow-all", "--allow-import"]) {
    assert.equal(flagValues(perms, absent), undefined, `${absent} must not be granted`);
  }
  assert.ok(!words.includes("-A"));
  // The run task (local use) shares the network, sys and prompt choices; it reads and runs more on purpose.
  const run = taskWords("run");
  for (const w of ["--no-prompt", "--allow-net", "--allow-sys=hostname"]) assert.ok(run.includes(w), `run has ${w}`);
});

Deno.test("Under exactly the compile task's permissions the hub logs in in-cluster with a TokenRequest token and with a mounted kubeconfig, and survives a token rotation without restarting", async () => {
  requireClusters();
  const ns = await testNamespace("binary", { contexts: ["dev", "staging"] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-binary-" });
  const dev = await hubIdentity("dev", ns.name, "operator-hub");
  const staging = await hubIdentity("staging", ns.name, "operator-hub", { leases: false });
  const apis = { dev: localApi("dev"), staging: localApi("staging") };
  let hub: HubProcess | undefined;
  try {
    const firstToken = await dev.token();
    const sa = new ServiceAccountDir(`${tmp}/sa`, { token: firstToken, ca: apiserverCa("dev"), namespace: ns.name });
    Deno.mkdirSync(`${tmp}/clusters`);
    const stagingToken = await staging.token();
    Deno.writeTextFileSync(`${tmp}/clusters/staging.yaml`, remoteKubeconfig("staging", stagingToken));
    const permissions = mapPaths(compilePermissions(), {
      [MOUNT_DIR]: `${tmp}/clusters`,
      [SERVICE_ACCOUNT_DIR]: sa.path,
    });
    hub = HubProcess.start({
      clusters: ["in-cluster", "staging"],
      kubeconfigs: [`${tmp}/clusters/staging.yaml`],
      permissions,
      env: inClusterEnv("dev"),
      args: [...await deployOperatorArgs(), "--service-account-dir", sa.path, "--namespace", ns.name, "--leader-elect"],
    });
    const status = await hub.waitStatus(
      (s) => s.ready && s.leaderElection?.leader === true,
      60_000,
      "ready and leading",
    );
    assert.equal(status.leaderElection.cluster, "in-cluster");
    assert.equal(status.leaderElection.lease, `${ns.name}/operator-hub.demo.operator`, "Lease in the pod's namespace");
    assert.deepEqual(Object.keys(status.clusters).sort(), ["in-cluster", "staging"]);

    await apis.dev.createUuids(ns.name, names("a", 10));
    await apis.staging.createUuids(ns.name, names("a", 10));
    const before = await assigned(apis.dev, ns.name, 10);
    await assigned(apis.staging, ns.name, 10);

    // Rotation: the old ServiceAccount goes away, so every token minted for it is rejected.
    await dev.recreate();
    await waitFor(async () => (await tokenStatus("dev", firstToken)) === 401, "the old token rejected", 30_000);
    await apis.dev.createUuids(ns.name, names("b", 5));
    await waitFor(
      async () => {
        const m = parseMetrics((await hub!.get("/metrics")).text);
        return metricSum(m, "rest_client_requests_total", { cluster: "in-cluster", code: "401" }) > 0;
      },
      "the hub's requests with the old token answered 401",
      60_000,
    );
    const secondToken = await dev.token();
    sa.rotate(secondToken);
    const after = await assigned(apis.dev, ns.name, 15, 120_000);
    for (const [name, uuid] of before) assert.equal(after.get(name), uuid, `${name} kept its UUID`);
    await hub.waitStatus((s) => s.leaderElection?.leader === true && s.clusters["in-cluster"].state === "watching");
    assert.equal(hub.exited, undefined, "no restart");
    const logs = hub.logs.join("\n");
    for (const t of [firstToken, secondToken, stagingToken]) assert.ok(!logs.includes(t), "no token in the logs");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub?.kill();
    for (const a of Object.values(apis)) {
      await a.deleteAllUuids(ns.name).catch(() => {});
      a.close();
    }
    await dev.cleanup();
    await staging.cleanup();
    await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("Like in the image, the binary's permissions let the hub find the Secret's kubeconfigs in ./clusters with no flag", async () => {
  requireClusters();
  const ns = await testNamespace("workdir", { contexts: ["staging"] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-workdir-" });
  const staging = await hubIdentity("staging", ns.name, "operator-hub", { leases: false });
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  try {
    Deno.mkdirSync(`${tmp}/clusters`);
    Deno.mkdirSync(`${tmp}/home`);
    Deno.writeTextFileSync(`${tmp}/clusters/staging.yaml`, remoteKubeconfig("staging", await staging.token()));
    const permissions = mapPaths(compilePermissions(), {
      [MOUNT_DIR]: `${tmp}/clusters`,
      [SERVICE_ACCOUNT_DIR]: `${tmp}/sa`,
    });
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        `${ROOT}deno.json`,
        ...permissions,
        `${ROOT}src/cli/main.ts`,
        "--clusters",
        "staging",
        ...await deployOperatorArgs(),
        "--namespace",
        ns.name,
        "--liveness",
        `http://127.0.0.1:${port}/healthz`,
      ],
      cwd: tmp, // the image's WORKDIR /app, with the Secret at /app/clusters
      // No $KUBECONFIG and an empty home, as in the pod; the module cache stays where it is.
      clearEnv: true,
      env: { ...ambientEnv(), HOME: `${tmp}/home`, DENO_DIR: await denoDir(), NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const exited = child.status;
    const ready = await waitFor(
      async () => {
        const early = await Promise.race([exited, Promise.resolve(undefined)]);
        if (early) throw new Error(`the hub exited with ${early.code}`);
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        const body = await res.json();
        return res.status === 200 ? body : undefined;
      },
      "readiness",
      60_000,
    );
    assert.deepEqual(Object.keys(ready.clusters), ["staging"]);
    assert.equal(ready.clusters.staging.state, "watching");
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr).slice(-2000));
    child = undefined;
  } finally {
    if (child) {
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
      console.error(new TextDecoder().decode((await child.output()).stderr).slice(-3000));
    }
    await staging.cleanup();
    await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("Like in the image, with the Dockerfile's jemalloc preloaded and its MALLOC_CONF (taken without a warning) the hub under exactly the compile task's permissions gets ready, serves a Uuid and stops cleanly, and jemalloc is its malloc", async () => {
  requireClusters();
  // The image's LD_PRELOAD and MALLOC_CONF, with this machine's copy of the same pinned Debian package.
  const image = imageAllocator(Deno.readTextFileSync(`${ROOT}Dockerfile`));
  const library = (await hostLibrary(image)).path;
  const malloc = { LD_PRELOAD: library, ...(image.env.MALLOC_CONF ? { MALLOC_CONF: image.env.MALLOC_CONF } : {}) };
  // jemalloc names an option it does not take on stderr; prove it would, so its silence below means something.
  const probe = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "0"],
    env: { ...malloc, MALLOC_CONF: `${image.env.MALLOC_CONF ?? "narenas:1"},no_such_option:1` },
    stdin: "null",
  }).output();
  assert.match(new TextDecoder().decode(probe.stderr), /<jemalloc>: Invalid conf pair: no_such_option:1/);
  const ns = await testNamespace("jemalloc", { contexts: ["staging"] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-jemalloc-" });
  const staging = await hubIdentity("staging", ns.name, "operator-hub", { leases: false });
  const api = localApi("staging");
  let hub: HubProcess | undefined;
  try {
    Deno.mkdirSync(`${tmp}/clusters`);
    Deno.writeTextFileSync(`${tmp}/clusters/staging.yaml`, remoteKubeconfig("staging", await staging.token()));
    hub = HubProcess.start({
      clusters: ["staging"],
      kubeconfigs: [`${tmp}/clusters/staging.yaml`],
      permissions: mapPaths(compilePermissions(), {
        [MOUNT_DIR]: `${tmp}/clusters`,
        [SERVICE_ACCOUNT_DIR]: `${tmp}/sa`,
      }),
      env: malloc,
      args: [...await deployOperatorArgs(), "--namespace", ns.name],
    });
    await hub.waitReady();
    assert.equal(mappedJemalloc(hub.pid), library, "the hub's process maps the preloaded jemalloc");
    assert.equal((await hub.get("/healthz")).status, 200);
    assert.equal((await hub.get("/readyz")).status, 200);
    await api.createUuids(ns.name, names("j", 3));
    const uuids = await assigned(api, ns.name, 3);
    assert.equal(new Set(uuids.values()).size, 3);
    assert.equal((await hub.stop()).code, 0, hub.tail());
    assert.ok(!hub.logs.some((l) => l.includes("<jemalloc>")), `jemalloc took the image's MALLOC_CONF: ${hub.tail()}`);
  } finally {
    await hub?.kill();
    await api.deleteAllUuids(ns.name).catch(() => {});
    api.close();
    await staging.cleanup();
    await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("Without any one of the compile task's permissions the hub exits 2 at once, naming the missing flag", async () => {
  requireClusters();
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-perms-" });
  try {
    const sa = new ServiceAccountDir(`${tmp}/sa`, {
      token: "not-a-real-token",
      ca: apiserverCa("dev"),
      namespace: "x",
    });
    Deno.mkdirSync(`${tmp}/clusters`);
    Deno.writeTextFileSync(`${tmp}/clusters/staging.yaml`, remoteKubeconfig("staging", "not-a-real-token"));
    const full = mapPaths(compilePermissions(), { [MOUNT_DIR]: `${tmp}/clusters`, [SERVICE_ACCOUNT_DIR]: sa.path });
    const readWord = full.find((w) => w.startsWith("--allow-read="))!;
    const [mountRead, saRead] = readWord.slice("--allow-read=".length).split(",");
    const cases: { without: string; permissions: string[]; expect: RegExp }[] = [
      ...full.map((w) => ({ without: w, permissions: full.filter((x) => x !== w), expect: expectationFor(w) })),
      {
        without: `read of ${MOUNT_DIR} only`,
        permissions: full.map((w) => w === readWord ? `--allow-read=${saRead}` : w),
        expect: /cannot read kubeconfig .*staging\.yaml: no read permission \(run Deno with --allow-read\)/,
      },
      {
        without: `read of ${SERVICE_ACCOUNT_DIR} only`,
        permissions: full.map((w) => w === readWord ? `--allow-read=${mountRead}` : w),
        expect: /cannot use "in-cluster": .*token: no read permission \(run Deno with --allow-read\)/,
      },
    ];
    const args = [
      "--kubeconfig",
      `${tmp}/clusters/staging.yaml`,
      "--clusters",
      "in-cluster,staging",
      "--service-account-dir",
      sa.path,
      "--leader-elect",
      "--liveness",
      `http://127.0.0.1:${freePort()}/healthz`,
    ];
    const tookMs: number[] = [];
    for (const c of cases) {
      const started = Date.now();
      // The timeout is a hang guard, not a speed check: 60 s is far above 5× the measured median (see the figure).
      const r = await runHubCli(args, { permissions: c.permissions, env: inClusterEnv("dev"), timeoutMs: 60_000 });
      tookMs.push(Date.now() - started);
      const lines = r.stderr.trim().split("\n");
      assert.equal(r.code, 2, `without ${c.without}: exit code ${r.code}\n${r.stderr}`);
      assert.equal(lines.length, 1, `without ${c.without}: one line\n${r.stderr}`);
      assert.match(lines[0], /^operator-hub: error: /);
      assert.match(lines[0], c.expect, `without ${c.without}`);
    }
    tookMs.sort((a, b) => a - b);
    console.log(`figure: without one permission the hub exited 2 after ${tookMs[tookMs.length >> 1]} ms (median)`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

/** This process's environment without anything that would point the hub at a cluster. */
function ambientEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of ["KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"]) delete env[k];
  return env;
}

async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdin: "null" }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

function expectationFor(word: string): RegExp {
  if (word === "--allow-net") return /no network permission for cluster "in-cluster" .*--allow-net/;
  if (word.startsWith("--allow-read=")) {
    return /cannot read kubeconfig .*: no read permission \(run Deno with --allow-read\)/;
  }
  if (word.startsWith("--allow-env=")) {
    return /cannot read environment variable KUBERNETES_SERVICE_HOST: Deno was started without --allow-env=KUBERNETES_SERVICE_HOST/;
  }
  if (word === "--allow-sys=hostname") {
    return /cannot read the hostname for the leader-election identity: Deno was started without --allow-sys=hostname/;
  }
  throw new Error(`no expectation for a compile permission ${word}: add one`);
}
