// Fault: missing RBAC (403). The hub runs as least-privileged service accounts that lack `watch` on uuid, or
// `patch` on uuid/status; the pre-flight SelfSubjectAccessReview must name the exact verb and resource.

import assert from "node:assert/strict";
import { UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { faultScenario, logLines, recordFigure, secondsSince, waitStatus } from "../support/fault_harness.ts";

const NS = "rbac-ns";
/** Hang guard for the pre-flight's report: ≥ 5× the median measured (1-7 s, on a quiet and on a busy machine). */
const REPORT_HANG_GUARD_MS = 60_000;

/** A ClusterRole with the rules the hub needs in a cluster that is not its home, minus what `omit` says. */
function clusterRole(name: string, omit: "watch" | "patch-status"): string {
  const uuidVerbs = ["get", "list", "watch"].filter((v) => !(omit === "watch" && v === "watch"));
  const rules = [
    { apiGroups: ["demo.operator"], resources: ["uuid"], verbs: uuidVerbs },
    ...(omit === "patch-status"
      ? []
      : [{ apiGroups: ["demo.operator"], resources: ["uuid/status"], verbs: ["patch"] }]),
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    // The Mirror operator (on by default) in a cluster that is not its home: the copies' verbs only.
    {
      apiGroups: [""],
      resources: ["configmaps", "secrets"],
      verbs: ["get", "list", "watch", "create", "patch", "delete"],
    },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "create"] },
  ];
  return JSON.stringify({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules });
}

function binding(name: string): string {
  return JSON.stringify({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name, namespace: NS }],
  });
}

Deno.test("A least-privileged identity lacking watch, or patch on uuid/status, is reported as forbidden with the exact missing permission in /status and the log, quickly, and recovers once granted", async () => {
  await using s = await faultScenario("rbac");
  const { f, api } = s;
  assert.equal(s.ns, NS);
  const tokens: Record<string, string> = {};
  for (const [sa, omit] of [["hub-nowatch", "watch"], ["hub-nostatus", "patch-status"]] as const) {
    await f.kubectl(["create", "serviceaccount", sa, "-n", NS]);
    await f.kubectl(["apply", "-f", "-"], clusterRole(sa, omit));
    await f.kubectl(["apply", "-f", "-"], binding(sa));
    tokens[sa] = (await f.kubectl(["create", "token", sa, "-n", NS, "--duration=1h"])).trim();
  }
  await api.createUuids(NS, ["r-0", "r-1"]);
  const kubeconfig = await s.kubeconfig([
    f.context("rbac-nowatch", { user: { token: tokens["hub-nowatch"] } }),
    f.context("rbac-nostatus", { user: { token: tokens["hub-nostatus"] } }),
  ]);
  const hub = s.startHub(["prod", "rbac-nowatch", "rbac-nostatus"], {
    extraKubeconfigs: [kubeconfig],
    secrets: Object.values(tokens),
    label: "rbac-403",
  });
  const startedAt = performance.now();

  const st = await waitStatus(
    hub,
    "both forbidden",
    (x) => x.clusters["rbac-nowatch"].state === "forbidden" && x.clusters["rbac-nostatus"].state === "forbidden",
    REPORT_HANG_GUARD_MS,
  );
  const reportedIn = secondsSince(startedAt);
  assert.deepEqual(st.clusters["rbac-nowatch"].missingPermissions, ["watch uuid.demo.operator"]);
  assert.deepEqual(st.clusters["rbac-nostatus"].missingPermissions, ["patch uuid/status.demo.operator"]);
  assert.match(st.clusters["rbac-nowatch"].lastError, /watch uuid\.demo\.operator/);
  assert.match(st.clusters["rbac-nostatus"].lastError, /patch uuid\/status\.demo\.operator/);
  await waitStatus(hub, "prod served meanwhile", (x) => x.clusters.prod.state === "watching", 20_000);
  assert.equal((await hub.get("/healthz")).status, 200);
  const readyz = await hub.get("/readyz");
  assert.equal(readyz.status, 503);
  assert.deepEqual([...readyz.body.notReady].sort(), ["rbac-nostatus", "rbac-nowatch"]);
  for (
    const [cluster, text] of [["rbac-nowatch", "watch uuid.demo.operator"], [
      "rbac-nostatus",
      "patch uuid/status.demo.operator",
    ]]
  ) {
    const lines = logLines(hub, (l) => l.cluster === cluster && JSON.stringify(l).includes(text));
    assert.ok(lines.length >= 1, `the log names ${text} for ${cluster}`);
    assert.ok(["warn", "error"].includes(lines[0].level), lines[0].level);
  }

  // Grant what was missing: the periodic pre-flight notices without a restart.
  const grantedAt = performance.now();
  await f.kubectl(
    ["apply", "-f", "-"],
    clusterRole("hub-nowatch", "patch-status").replace(
      /"resources":\["uuid"\],"verbs":\["get","list","watch"\]/,
      '"resources":["uuid"],"verbs":["get","list","watch"]},{"apiGroups":["demo.operator"],"resources":["uuid/status"],"verbs":["patch"]',
    ),
  );
  await f.kubectl(
    ["apply", "-f", "-"],
    clusterRole("hub-nostatus", "watch").replace(
      '"verbs":["get","list"]',
      '"verbs":["get","list","watch"]',
    ),
  );
  await waitStatus(
    hub,
    "both watching",
    (x) => x.clusters["rbac-nowatch"].state === "watching" && x.clusters["rbac-nostatus"].state === "watching",
    45_000,
  );
  const assigned = await waitAllAssigned(api, NS, 2, 30_000);
  const recoveredIn = secondsSince(grantedAt);
  await recordFigure({
    fault: "403: RBAC lacking watch / patch uuid/status, then granted",
    reportedSeconds: reportedIn,
    recoverSeconds: recoveredIn,
    lost: ["r-0", "r-1"].filter((n) => !UUID_V4.test(assigned.get(n) ?? "")).length,
    connectionsDuringOutage: `${(await hub.get("/status")).body.clusters["rbac-nowatch"].connectAttempts} attempts`,
  });
});
