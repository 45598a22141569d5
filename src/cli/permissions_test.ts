// Unit tests for the permission helpers and the process.env view npm packages get under a narrow --allow-env.
import assert from "node:assert/strict";
import { HUB_ENV, netHost, restrictedEnv } from "./permissions.ts";
import { loadContexts } from "../kube/mod.ts";

const backend = (vars: Record<string, string>, readable: string[]) => ({
  mayRead: (name: string) => readable.includes(name),
  get: (name: string) => vars[name],
  known: HUB_ENV,
});

Deno.test("restrictedEnv() shows granted variables and reads every other one as unset, without throwing", () => {
  const env = restrictedEnv(backend({ HOME: "/home/x", UNDICI_NO_WASM_SIMD: "1", KUBECONFIG: "/k" }, ["HOME"]));
  assert.equal(env.HOME, "/home/x");
  assert.equal(env.UNDICI_NO_WASM_SIMD, undefined, "set but not granted");
  assert.equal(env.KUBECONFIG, undefined, "set but not granted");
  assert.equal("HOME" in env, true);
  assert.equal("DEBUG" in env, false);
  assert.deepEqual(Object.keys(env), ["HOME"]);
  assert.deepEqual({ ...env }, { HOME: "/home/x" });
});

Deno.test("restrictedEnv() keeps writes and deletes inside the view, as the debug package does with DEBUG", () => {
  const env = restrictedEnv(backend({ HOME: "/h" }, ["HOME"]));
  env.DEBUG = "x";
  assert.equal(env.DEBUG, "x");
  assert.deepEqual(Object.keys(env).sort(), ["DEBUG", "HOME"]);
  delete env.DEBUG;
  delete env.HOME;
  assert.equal(env.DEBUG, undefined);
  assert.equal(env.HOME, undefined);
  assert.deepEqual(Object.keys(env), []);
});

Deno.test("netHost() gives the host:port Deno's net permission checks, with the scheme's default port", () => {
  assert.equal(netHost("https://10.0.0.1:6443"), "10.0.0.1:6443");
  assert.equal(netHost("https://kube.example.com"), "kube.example.com:443");
  assert.equal(netHost("http://proxy.local"), "proxy.local:80");
  assert.equal(netHost("https://[::1]:16443"), "[::1]:16443");
});

Deno.test("HUB_ENV lists exactly the variables main.ts and the kubeconfig loader read", async () => {
  // main.ts hands readEnv to loadContexts() and to the in-cluster selection; record what those ask for, on the
  // paths that read the most: no --kubeconfig and no $KUBECONFIG (so ~/.kube/config via $HOME), and in-cluster.
  const root = await Deno.makeTempDir({ prefix: "permissions_test_" });
  try {
    const read = new Set<string>();
    const env = (name: string) => {
      read.add(name);
      return ({ HOME: root, KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" } as Record<
        string,
        string
      >)[name];
    };
    await Deno.writeTextFile(`${root}/token`, "t");
    await Deno.writeTextFile(`${root}/namespace`, "default");
    await Deno.writeTextFile(`${root}/ca.crt`, "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n");
    const catalog = await loadContexts({ files: [], env, cwd: root });
    const [pod] = catalog.select(["in-cluster"], { inCluster: { root, env } });
    assert.equal(pod.server, "https://10.0.0.1:443", "the in-cluster path ran");
    assert.deepEqual([...read].sort(), [...HUB_ENV].sort());
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
