// Unit tests for the pod's own cluster access, from a service-account folder made by the test.
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../errors.ts";
import { IN_CLUSTER, inClusterAccess } from "./in_cluster.ts";

const CA = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const ENV = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

async function serviceAccount(files: Record<string, string>, fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir();
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(root, name), text);
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("inClusterAccess reaches the service address with the pod's token, CA and namespace", () =>
  serviceAccount({ token: "sa-token-1\n", "ca.crt": CA, namespace: "hub-system\n" }, async (root) => {
    const access = inClusterAccess({ root, env: ENV });
    assert.equal(access.name, IN_CLUSTER);
    assert.equal(access.server, "https://10.96.0.1:443");
    assert.equal(access.namespace, "hub-system");
    assert.equal(access.source, root);
    const auth = await access.auth();
    assert.deepEqual(auth.headers, { Authorization: "Bearer sa-token-1" });
    assert.deepEqual(auth.caCerts, [CA]);
    assert.equal(auth.insecureSkipTlsVerify, false);
  }));

Deno.test("inClusterAccess picks up a rotated token on the next auth()", () =>
  serviceAccount({ token: "sa-token-1", "ca.crt": CA }, async (root) => {
    const access = inClusterAccess({ root, env: ENV });
    assert.equal((await access.auth()).headers.Authorization, "Bearer sa-token-1");
    await Deno.writeTextFile(join(root, "token"), "sa-token-rotated");
    assert.equal((await access.auth()).headers.Authorization, "Bearer sa-token-rotated");
  }));

Deno.test("inClusterAccess brackets an IPv6 service host and has no namespace without the namespace file", () =>
  serviceAccount({ token: "t", "ca.crt": CA }, (root) => {
    const access = inClusterAccess({
      root,
      env: (k) => ({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" })[k],
    });
    assert.equal(access.server, "https://[fd00::1]:6443");
    assert.equal(access.namespace, undefined);
    return Promise.resolve();
  }));

Deno.test("inClusterAccess refuses with a ConfigError when the service variables are not set", () =>
  serviceAccount({ token: "t", "ca.crt": CA }, (root) => {
    for (const env of [{}, { KUBERNETES_SERVICE_HOST: "10.96.0.1" }, { KUBERNETES_SERVICE_PORT: "443" }]) {
      assert.throws(
        () => inClusterAccess({ root, env }),
        (err: Error) =>
          err instanceof ConfigError &&
          /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/.test(err.message),
      );
    }
    return Promise.resolve();
  }));

Deno.test("inClusterAccess refuses with a ConfigError naming the missing token or CA file", () =>
  serviceAccount({ "ca.crt": CA }, async (root) => {
    assert.throws(
      () => inClusterAccess({ root, env: ENV }),
      (err: Error) => err instanceof ConfigError && err.message.includes(`${join(root, "token")}: not found`),
    );
    await Deno.writeTextFile(join(root, "token"), "t");
    await Deno.remove(join(root, "ca.crt"));
    assert.throws(
      () => inClusterAccess({ root, env: ENV }),
      (err: Error) => err instanceof ConfigError && err.message.includes(`${join(root, "ca.crt")}: not found`),
    );
  }));
