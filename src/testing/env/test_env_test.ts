import assert from "node:assert/strict";
import { testEnv } from "./test_env.ts";
import { TestEnvError } from "./test_env_error.ts";

// Refused before anything starts: no binaries are looked for, no process spawned (`binaries` names a missing folder,
// which would be refused too, later).
const binaries = "/nonexistent/operator-hub-kube-bin";

Deno.test("testEnv refuses cluster names that are not DNS labels, repeated or none, before starting anything", async () => {
  for (const clusters of [["East"], ["a_b"], ["-a"], ["x".repeat(40)], ["a", "a"], []]) {
    const err = await testEnv({ clusters, binaries }).catch((e) => e);
    assert.ok(err instanceof TestEnvError, `${JSON.stringify(clusters)}: ${err}`);
    assert.match(err.message, /invalid cluster name|repeat|at least one/);
  }
});

Deno.test("testEnv refuses a CRD source that is not a CRD before starting anything, naming it", async () => {
  await assert.rejects(
    testEnv({ crds: [{ kind: "ConfigMap" }], binaries }),
    /a CRD object is not a CustomResourceDefinition/,
  );
});

Deno.test("testEnv with prebuilt binaries that are missing says which folder and what it lacks", async () => {
  await assert.rejects(
    testEnv({ binaries }),
    /\/nonexistent\/operator-hub-kube-bin .* lacks executable kube-apiserver/,
  );
});
