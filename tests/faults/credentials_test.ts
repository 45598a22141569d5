// Fault: credentials rejected (401). A token revoked at runtime (the apiserver's token file rewritten and the
// apiserver restarted), then rotated in the kubeconfig's tokenFile; exec credential plugins that fail or hang.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { randomToken } from "../../dev/support/fault_cluster.ts";
import { faultScenario, logLines, recordFigure, secondsSince, waitStatus } from "../support/fault_harness.ts";
import { InterceptProxy } from "../support/intercept_proxy.ts";

/** Created objects that do not show a valid UUID (a figure, measured). */
const lostOf = (m: Map<string, unknown>, created: string[]) =>
  created.filter((n) => !UUID_V4.test(String(m.get(n) ?? ""))).length;

/** The apiserver's answer to a revoked token, never a bare "401" (which a port such as :40185 also contains). */
const UNAUTHORIZED = /\bUnauthorized\b/;

Deno.test("A token revoked at runtime shows the cluster unauthorized with one clear error per backoff step, the others continue, and rewriting the token file recovers it without a restart", async () => {
  const t1 = randomToken();
  const t2 = randomToken();
  await using s = await faultScenario("creds", { local: ["prod"] });
  const { f, dir, ns, api: fault, local: { prod } } = s;
  f.setTokens([{ token: t1, user: "hub", groups: ["system:masters"] }]);
  await f.restart();
  // Rides out the apiserver restart below (the revocation); any other error fails the test.
  const observer = s.observe(fault, { acrossRestarts: true });
  const tokenFile = await dir.write("hub.token", t1 + "\n");
  const kubeconfig = await s.kubeconfig([f.context("creds", { user: { tokenFile } })]);
  const hub = s.startHub(["prod", "creds"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    secrets: [t1, t2],
    label: "credentials-401",
  });
  await hub.waitReady(60_000);
  await fault.createUuids(ns, names("a", 5));
  await waitAllAssigned(fault, ns, 5, 30_000);
  const attemptsBefore = (await hub.get("/status")).body.clusters.creds.connectAttempts as number;

  // Revoke: the apiserver now only knows t2.
  f.setTokens([{ token: t2, user: "hub", groups: ["system:masters"] }]);
  const revokedAt = performance.now();
  await f.restart();
  const unauthorized = await waitStatus(hub, "creds unauthorized", (x) => x.clusters.creds.state === "unauthorized");
  assert.match(unauthorized.clusters.creds.lastError, UNAUTHORIZED);
  await fault.createUuids(ns, names("b", 5)); // made while the hub is locked out
  await prod.createUuids(ns, names("p", 5));
  await waitAllAssigned(prod, ns, 5, 15_000); // the others continue
  await new Promise((r) => setTimeout(r, 4_000));
  const lockedOut = (await hub.get("/status")).body;
  assert.equal(lockedOut.clusters.creds.state, "unauthorized");
  assert.equal(lockedOut.clusters.prod.state, "watching");
  assert.notEqual(lockedOut.status, "failing");

  // One clear error per backoff step: each failure line says what and when the next try is, and the next line
  // comes no sooner than that.
  const failures = logLines(hub, (l) => l.cluster === "creds" && (l.level === "warn" || l.level === "error"))
    .filter((l) => UNAUTHORIZED.test(String(l.error)));
  assert.ok(failures.length >= 2, `at least two attempts while locked out (${failures.length})`);
  // Not a flood, whatever the machine's speed: no more error lines than list/watch attempts /status counted since
  // the revocation (+1 for an attempt logged after that snapshot).
  const attemptsLockedOut = (lockedOut.clusters.creds.connectAttempts as number) - attemptsBefore;
  assert.ok(
    failures.length <= attemptsLockedOut + 1,
    `not a flood: ${failures.length} error lines for ${attemptsLockedOut} attempts`,
  );
  // Each retry loop keeps its own promise: the lines are compared per loop (an operator's pre-flight, or one watch
  // named by its resource), as every operator hosted (the Mirror's copy watches beside the Uuid's) retries on its own.
  const loops = Map.groupBy(failures, (l) => `${l.operator ?? ""}/${l.resource ?? ""}`);
  // The gaps must exist: at least one loop logged two failures, so at least one gap is compared below (two lines
  // from two different loops would otherwise leave nothing to compare).
  const gaps = [...loops.values()].reduce((n, lines) => n + lines.length - 1, 0);
  assert.ok(
    gaps >= 1,
    `no retry loop logged two failures while locked out: ${
      JSON.stringify([...loops].map(([loop, lines]) => [loop, lines.length]))
    }`,
  );
  for (const [loop, lines] of loops) {
    for (let i = 1; i < lines.length; i++) {
      const gap = Date.parse(lines[i].time) - Date.parse(lines[i - 1].time);
      const promised = Number(lines[i - 1].retryInMs);
      assert.ok(Number.isFinite(promised), `failure line without retryInMs: ${JSON.stringify(lines[i - 1])}`);
      assert.ok(
        gap >= promised - 50,
        `${loop}: line ${i} came ${gap} ms after the previous one, which promised ${promised} ms`,
      );
    }
  }
  assert.match(String(failures[0].error), /401 Unauthorized/);

  // Rotation: the kubeconfig's token file now holds t2.
  const rotatedAt = performance.now();
  await dir.write("hub.token", t2 + "\n");
  await waitStatus(hub, "creds watching again", (x) => x.clusters.creds.state === "watching", 45_000);
  const after = await waitAllAssigned(fault, ns, 10, 30_000);
  const recoveredIn = secondsSince(rotatedAt);
  assert.equal(hub.exited, undefined, "no restart");
  observer.assertStable(after.keys());

  await recordFigure({
    fault: "401: token revoked (apiserver token file rewritten + restart), then token file rotated",
    recoverSeconds: recoveredIn,
    lockedOutSeconds: Math.round((secondsSince(revokedAt) - recoveredIn) * 10) / 10,
    lost: lostOf(after, [...names("a", 5), ...names("b", 5)]),
    changed: observer.changed().length,
    errorLinesWhileLockedOut: failures.length,
    connectionsDuringOutage: `${lockedOut.clusters.creds.connectAttempts} list/watch attempts in total`,
  });
});

/**
 * Hang guard, not a speed check: how long the hub may take from its start to report both exec clusters. The hung
 * plugin alone takes its 10 s timeout; 60 s is 5× that, so a loaded machine running other test files at the same
 * time (a hub start of 10 s and more) does not trip it.
 */
const EXEC_REPORT_HANG_GUARD_MS = 60_000;

Deno.test("Exec credential plugins that fail or hang show their clusters unauthorized with an error naming the plugin, never leak its output, and recover once the plugin works", async () => {
  const hubToken = randomToken();
  const leaked = `plugin-stderr-${randomToken()}`;
  await using s = await faultScenario("exec");
  const { cleanup, f, dir, ns, api: fault } = s;
  f.setTokens([{ token: hubToken, user: "hub", groups: ["system:masters"] }]);
  await f.restart();
  const pidFile = `${dir.path}/plugin.pids`;
  // Every plugin process records its pid, so the test can end the hung ones it caused (by pid).
  cleanup.defer(async () => {
    const pids = (await Deno.readTextFile(pidFile).catch(() => "")).split("\n").filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
  });
  const credential = JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: hubToken },
  });
  const failing = `#!/bin/sh\necho $$ >> ${pidFile}\necho "${leaked}" >&2\necho "${leaked}"\nexit 1\n`;
  const hanging = `#!/bin/sh\necho $$ >> ${pidFile}\nexec sleep 300\n`;
  const working = `#!/bin/sh\necho $$ >> ${pidFile}\ncat <<'EOF'\n${credential}\nEOF\n`;
  const failPlugin = await dir.write("fail-plugin.sh", failing, 0o700);
  const hangPlugin = await dir.write("hang-plugin.sh", hanging, 0o700);
  // The exec clusters reach the apiserver through a proxy that records every request: the figure of requests
  // sent while no plugin yields a credential is counted there, not assumed.
  const proxy = cleanup.add(await InterceptProxy.inFrontOf(f), (p) => p.close());
  const kubeconfig = await s.kubeconfig([
    f.context("exec-fail", { server: proxy.url, user: { exec: { command: failPlugin } } }),
    f.context("exec-hang", { server: proxy.url, user: { exec: { command: hangPlugin } } }),
  ]);
  const observer = s.observe();
  await fault.createUuids(ns, names("e", 3));
  // A plugin may run 10 s (EXEC_PLUGIN_TIMEOUT_MS) before it is stopped and reported.
  const hub = s.startHub(["prod", "exec-fail", "exec-hang"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    secrets: [hubToken, leaked],
    label: "credentials-exec",
  });
  const broken = await waitStatus(
    hub,
    "both exec clusters unauthorized",
    (x) => x.clusters["exec-fail"].state === "unauthorized" && x.clusters["exec-hang"].state === "unauthorized",
    EXEC_REPORT_HANG_GUARD_MS,
  );
  assert.equal(broken.clusters.prod.synced, true, "prod is served meanwhile");
  assert.match(broken.clusters["exec-fail"].lastError, /fail-plugin\.sh/);
  assert.match(broken.clusters["exec-hang"].lastError, /hang-plugin\.sh/);
  assert.match(broken.clusters["exec-hang"].lastError, /did not finish|timed? ?out|within/i);
  assert.equal((await hub.get("/healthz")).status, 200);

  // Both plugins start working.
  const fixedAt = performance.now();
  const requestsWhileBroken = proxy.seen((r) => r.at < fixedAt).length;
  // No credential, no request: the hub sends nothing unauthenticated while the plugins fail.
  assert.equal(requestsWhileBroken, 0, "requests reached the apiserver while no plugin gave a credential");
  await dir.write("fail-plugin.sh", working, 0o700);
  await dir.write("hang-plugin.sh", working, 0o700);
  await hub.waitReady(60_000);
  const recoveredIn = secondsSince(fixedAt);
  const st = (await hub.get("/status")).body;
  assert.equal(st.clusters["exec-fail"].objects, 3);
  assert.equal(st.clusters["exec-hang"].objects, 3);
  const after = await waitAllAssigned(fault, ns, 3, 30_000);
  observer.assertStable(after.keys());
  await recordFigure({
    fault: "exec credential plugin failing / hanging, then fixed",
    recoverSeconds: recoveredIn,
    lost: lostOf(after, names("e", 3)),
    changed: observer.changed().length,
    connectionsDuringOutage: `${requestsWhileBroken} requests reached the apiserver while no plugin gave a credential`,
  });
  // And the recovery went through the same proxy, so the count above could have been more than 0.
  assert.ok(proxy.seen((r) => r.at >= fixedAt).length > 0, "the recovered clusters' requests went through the proxy");
});
