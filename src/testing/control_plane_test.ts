import assert from "node:assert/strict";
import {
  apiserverFlags,
  CONTROLLER_MANAGER_USER,
  controllerManagerFlags,
  controllerManagerKubeconfig,
  DISABLED_CONTROLLERS,
  ensureServiceAccountKey,
} from "./control_plane.ts";

const pki = { caCert: "/p/ca.crt", caKey: "/p/ca.key", cert: "/p/cm.crt", key: "/p/cm.key" };

Deno.test("the apiserver listens on loopback only, on its port, with RBAC, its token file, the client CA and the service-account key", () => {
  const flags = apiserverFlags({
    port: 23456,
    certDir: "/d/certs",
    etcdUrl: "http://127.0.0.1:2379",
    etcdPrefix: "/registry-east",
    tokenFile: "/d/tokens.csv",
    clientCaFile: "/p/ca.crt",
    serviceAccountKey: "/d/sa.key",
  });
  for (
    const flag of [
      "--bind-address=127.0.0.1",
      "--secure-port=23456",
      "--etcd-prefix=/registry-east",
      "--authorization-mode=RBAC",
      "--token-auth-file=/d/tokens.csv",
      "--client-ca-file=/p/ca.crt",
      "--service-account-key-file=/d/sa.key",
      "--service-account-signing-key-file=/d/sa.key",
    ]
  ) assert.ok(flags.includes(flag), flag);
  assert.equal(new Set(flags.map((f) => f.split("=")[0])).size, flags.length, "no flag twice");
});

Deno.test("the controller manager runs every controller but the node and cloud ones, without leader election, with its own kubeconfig", () => {
  const flags = controllerManagerFlags({
    kubeconfig: "/d/cm.yaml",
    port: 24567,
    certDir: "/d/cm",
    serviceAccountKey: "/d/sa.key",
    rootCaFile: "/d/certs/apiserver.crt",
    pki,
  });
  assert.ok(flags.includes("--leader-elect=false"));
  assert.ok(flags.includes("--bind-address=127.0.0.1"));
  assert.ok(flags.includes("--cluster-signing-key-file=/p/ca.key"));
  const controllers = flags.find((f) => f.startsWith("--controllers="))!.slice("--controllers=".length).split(",");
  assert.deepEqual(controllers, ["*", ...DISABLED_CONTROLLERS.map((c) => `-${c}`)]);
  const kubeconfig = controllerManagerKubeconfig({ name: "east", url: "https://127.0.0.1:1", caFile: "/d/ca" }, pki);
  assert.match(kubeconfig, /client-certificate: "\/p\/cm.crt"/);
  assert.match(kubeconfig, new RegExp(`name: "${CONTROLLER_MANAGER_USER}"`));
  assert.doesNotMatch(kubeconfig, /token/);
});

Deno.test("the service-account key is written once, as PKCS#8 with mode 0600, and kept when it exists", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await ensureServiceAccountKey(`${dir}/sa.key`);
    const first = await Deno.readTextFile(`${dir}/sa.key`);
    assert.match(first, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PRIVATE KEY-----\n$/);
    assert.equal((await Deno.stat(`${dir}/sa.key`)).mode! & 0o777, 0o600);
    await ensureServiceAccountKey(`${dir}/sa.key`);
    assert.equal(await Deno.readTextFile(`${dir}/sa.key`), first);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
