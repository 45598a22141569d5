// Unit tests of what an untrusted cluster's connection failures look like in health and in the logs.
import assert from "node:assert/strict";
import { Logger } from "../../util/mod.ts";
import type { ClusterHealth } from "../health/cluster_health.ts";
import { notEngagedHealth } from "../health/hub_health.ts";
import {
  CANNOT_CONNECT,
  CANNOT_SYNC_WEBHOOKS,
  connectDetailAtDebug,
  withGenericAdmissionErrors,
  withGenericConnectErrors,
} from "./_untrusted_errors.ts";

const TUNNEL = "GET /api: cannot reach https://10.0.0.9:22: error sending request: tunnel refused (proxy 403)";
const REFUSED = "GET /api: cannot reach https://10.0.0.9:23: Connection refused (os error 111)";

function cluster(over: Partial<ClusterHealth>, operators: ClusterHealth["operators"]): ClusterHealth {
  return { ...notEngagedHealth([], null), ...over, operators };
}

Deno.test("withGenericConnectErrors() makes a refused port and a refused tunnel read the same", () => {
  const shown = [TUNNEL, REFUSED].map((e) =>
    JSON.stringify(withGenericConnectErrors(cluster({ state: "unreachable", lastError: e }, {
      uuid: { state: "unreachable", synced: false, objects: 0, queue: 0, lastError: e, missingPermissions: [] },
    })))
  );
  assert.equal(shown[0], shown[1]);
  assert.ok(shown[0].includes(CANNOT_CONNECT));
  for (const leak of ["tunnel", "refused", "10.0.0.9", ":22", ":23"]) assert.ok(!shown[0].includes(leak), leak);
});

Deno.test("withGenericConnectErrors() keeps the errors that are not connection failures, and does not change its input", () => {
  const forbidden = "operator mirror is missing RBAC permissions: list secrets";
  const input = cluster({ state: "unreachable", lastError: forbidden }, {
    mirror: { state: "forbidden", synced: false, objects: 0, queue: 0, lastError: forbidden, missingPermissions: [] },
    uuid: { state: "unreachable", synced: false, objects: 0, queue: 0, lastError: REFUSED, missingPermissions: [] },
  });
  const out = withGenericConnectErrors(input);
  assert.equal(out.operators.mirror.lastError, forbidden);
  assert.equal(out.operators.uuid.lastError, CANNOT_CONNECT);
  assert.equal(out.lastError, CANNOT_CONNECT, "the cluster itself is unreachable");
  assert.equal(input.operators.uuid.lastError, REFUSED);
  const missingCrd = cluster({ state: "missing-crd", lastError: "uuid: 404" }, {
    uuid: { state: "missing-crd", synced: false, objects: 0, queue: 0, lastError: "uuid: 404", missingPermissions: [] },
  });
  assert.deepEqual(withGenericConnectErrors(missingCrd), missingCrd);
});

Deno.test("withGenericAdmissionErrors() replaces only the untrusted clusters' installer errors", () => {
  const admission = {
    port: 1,
    clusters: { prod: { lastError: REFUSED }, "r-x": { lastError: REFUSED }, "r-ok": { lastError: null } },
  };
  const out = withGenericAdmissionErrors(admission, (n) => n.startsWith("r-")) as typeof admission;
  assert.equal(out.clusters.prod.lastError, REFUSED);
  assert.equal(out.clusters["r-x"].lastError, CANNOT_SYNC_WEBHOOKS);
  assert.equal(out.clusters["r-ok"].lastError, null);
  assert.equal(admission.clusters["r-x"].lastError, REFUSED, "the input is not changed");
  assert.equal(withGenericAdmissionErrors(admission, () => false), admission);
});

Deno.test("connectDetailAtDebug() writes a connection failure's detail at debug only, and children keep the rule", () => {
  const lines: Record<string, unknown>[] = [];
  const base = new Logger({ level: "debug", write: (l) => lines.push(JSON.parse(l)) });
  const log = connectDetailAtDebug(base).child({ cluster: "r-x" }).child({ operator: "uuid" });
  log.warn("watch failed, retrying", { phase: "unreachable", error: TUNNEL, retryInMs: 800 });
  log.error("cluster pre-flight failed", { state: "unreachable", error: REFUSED });
  log.warn("watch failed, retrying", { phase: "forbidden", error: "403 Forbidden" });
  log.info("listed", { objects: 3 });
  const above = lines.filter((l) => l.level !== "debug");
  assert.deepEqual(above.map((l) => [l.msg, l.error]), [
    ["watch failed, retrying", CANNOT_CONNECT],
    ["cluster pre-flight failed", CANNOT_CONNECT],
    ["watch failed, retrying", "403 Forbidden"],
    ["listed", undefined],
  ]);
  assert.ok(above.every((l) => l.cluster === "r-x" && l.operator === "uuid"));
  const debug = lines.filter((l) => l.level === "debug").map((l) => l.error);
  assert.deepEqual(debug, [TUNNEL, REFUSED]);
  const quiet: string[] = [];
  const info = connectDetailAtDebug(new Logger({ level: "info", write: (l) => quiet.push(l) }));
  info.warn("watch failed, retrying", { phase: "unreachable", error: TUNNEL });
  assert.equal(quiet.length, 1);
  assert.ok(!quiet[0].includes("tunnel"), "above debug the detail is never written");
  assert.equal(info.enabled("debug"), false);
});
