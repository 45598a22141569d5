// Security: no credential (token, key, client certificate, exec output) in any log line, /status or /metrics, even at
// debug level and with every kind of credential failing; the health server binds only where --liveness says and
// exposes nothing that mutates state. (Every other fault test also checks its own hub's output: see finishHub.)

import assert from "node:assert/strict";
import { waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { freePort } from "../../dev/support/free_port.ts";
import { FaultApiserver, randomToken, tempDir } from "../../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../../dev/support/kubeconfig_text.ts";
import { Cleanup, finishHub, startHub, waitStatus } from "../support/fault_harness.ts";

Deno.test("No credential appears in the hub's log, /status or /metrics, at debug level, while tokens, exec plugins, token files and client certificates fail", async () => {
  await using cleanup = new Cleanup();
  const good = randomToken();
  const wrong = randomToken();
  const unreachableToken = randomToken();
  const execSecret = randomToken();
  const f = cleanup.add(await FaultApiserver.start({ name: "sec" }), (x) => x.destroy());
  f.setTokens([{ token: good, user: "hub", groups: ["system:masters"] }]);
  await f.restart();
  const dir = cleanup.add(await tempDir("sec"), (d) => d.remove());
  const keyPem = await Deno.readTextFile(f.keyFile);
  const keyLines = keyPem.split("\n").filter((l) => l && !l.startsWith("-----"));
  const leaky = await dir.write(
    "leaky-plugin.sh",
    `#!/bin/sh\necho "token ${execSecret}" >&2\necho "{\\"status\\":{\\"token\\":\\"${execSecret}\\"}" \nexit 1\n`,
    0o700,
  );
  const badJson = await dir.write(
    "badjson-plugin.sh",
    `#!/bin/sh\necho '{"kind":"ExecCredential","status":{"token":"${execSecret}"'\n`,
    0o700,
  );
  const goodTokenFile = await dir.write("good.token", good + "\n");
  const vanishing = randomToken();
  const vanishingFile = await dir.write("vanishing.token", vanishing + "\n");
  const deadPort = freePort();
  const base = f.context("x");
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([
      f.context("sec-good", { user: { tokenFile: goodTokenFile } }),
      f.context("sec-wrong-token", { user: { token: wrong } }),
      f.context("sec-exec-leaky", { user: { exec: { command: leaky } } }),
      f.context("sec-exec-badjson", { user: { exec: { command: badJson } } }),
      f.context("sec-tokenfile-vanished", { user: { tokenFile: vanishingFile } }),
      { ...base, name: "sec-unreachable", server: `https://127.0.0.1:${deadPort}`, user: { token: unreachableToken } },
    ]).replace(
      // A client certificate user (the apiserver's own pair): the key must never be printed.
      '"contexts": [',
      '"contexts": [{"name":"sec-client-cert","context":{"cluster":"sec-good","user":"sec-client-cert"}},',
    ).replace(
      '"users": [',
      `"users": [{"name":"sec-client-cert","user":{"client-certificate-data":"${btoa(f.caPem)}",` +
        `"client-key-data":"${btoa(keyPem)}"}},`,
    ),
  );
  const contexts = [
    "sec-good",
    "sec-wrong-token",
    "sec-exec-leaky",
    "sec-exec-badjson",
    "sec-tokenfile-vanished",
    "sec-unreachable",
    "sec-client-cert",
  ];
  const hub = startHub(["prod", ...contexts], {
    extraKubeconfigs: [kubeconfig],
    namespaces: ["sec-ns"],
    args: ["--log-level", "debug", "--request-timeout", "3"],
  });
  const secrets = [
    vanishing,
    good,
    wrong,
    unreachableToken,
    execSecret,
    keyPem,
    ...keyLines,
    btoa(keyPem),
    f.adminToken,
  ];
  cleanup.defer(() => finishHub(hub, "security", secrets));
  const api = cleanup.add(f.api("sec"), (a) => a.close());
  await waitStatus(hub, "the hub serving", (x) => x.clusters["sec-tokenfile-vanished"] !== undefined, 30_000);
  await Deno.remove(vanishingFile); // a token file that vanishes at runtime
  await api.createNamespace("sec-ns");
  await api.createUuids("sec-ns", ["s-0", "s-1"]);

  // States settle one retry at a time (a context passes through `connecting` between attempts), so wait for each
  // context's final state; on a timeout the last /status is printed.
  const expected: Record<string, string[]> = {
    "sec-good": ["watching"],
    prod: ["watching"],
    "sec-wrong-token": ["unauthorized"],
    "sec-exec-leaky": ["unauthorized"],
    "sec-exec-badjson": ["unauthorized"],
    "sec-tokenfile-vanished": ["unauthorized"],
    "sec-unreachable": ["unreachable"],
    "sec-client-cert": ["unauthorized", "forbidden"],
  };
  const s = await waitStatus(hub, "every context in its final state", (x) => {
    const c = x.clusters;
    return Object.entries(expected).every(([n, states]) => states.includes(c[n].state)) &&
      contexts.slice(1).every((n) => c[n].lastError) && /vanishing\.token/.test(c["sec-tokenfile-vanished"].lastError);
  }, 45_000);
  await waitAllAssigned(api, "sec-ns", 2, 20_000);
  assert.match(s.clusters["sec-tokenfile-vanished"].lastError, /vanishing\.token: not found/);
  // Touch every endpoint, so the captured /status and /metrics hold everything there is.
  for (const path of ["/healthz", "/readyz", "/status", "/metrics", "/nope"]) await hub.get(path);
  const debugLines = hub.logs.filter((l) => l.includes('"level":"debug"')).length;
  assert.ok(debugLines > 10, `debug logging was on (${debugLines} lines)`);
  // finishHub (cleanup) greps the log, /status and /metrics for every secret above, and for credential shapes.
});

Deno.test("The health server listens only on the --liveness address and answers nothing but GET and HEAD", async () => {
  await using cleanup = new Cleanup();
  const hub = startHub(["prod"], { namespaces: ["security-health-ns"] });
  cleanup.defer(() => finishHub(hub, "security-health-server"));
  await hub.waitReady(60_000);
  // 127.0.0.2 is loopback too, but not the address --liveness named.
  const elsewhere = await Deno.connect({ hostname: "127.0.0.2", port: hub.port }).then(
    (c) => (c.close(), "connected"),
    (e) => e.name,
  );
  assert.equal(elsewhere, "ConnectionRefused");
  const before = (await hub.get("/status")).body;
  for (const path of ["/healthz", "/readyz", "/status", "/metrics", "/"]) {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await fetch(`http://127.0.0.1:${hub.port}${path}`, { method, body: "{}" });
      await res.body?.cancel();
      assert.equal(res.status, 405, `${method} ${path}`);
    }
  }
  const after = (await hub.get("/status")).body;
  assert.deepEqual(Object.keys(after.clusters), Object.keys(before.clusters));
  assert.equal(after.clusters.prod.state, "watching");
});
