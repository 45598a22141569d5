// `clusters:up` restarts a local kube-controller-manager that died, and its cluster deletes namespaces again. Runs alone
// (serial group): while its controller manager is down, no namespace of that cluster is deleted. What the controller
// managers do is dev/clusters/controllers_test.ts.

import assert from "node:assert/strict";
import { requireClusters } from "../support/mod.ts";
import { stopPid } from "./_process.ts";
import { clustersStatus, clustersUp, controllerManagerRecord, readStateSync } from "./clusters.ts";

Deno.test("clusters:up restarts a controller manager that was killed, reuses the others, and its cluster deletes namespaces again", async () => {
  const names = requireClusters().names;
  const victim = names[0];
  const before = readStateSync()!;
  const killed = controllerManagerRecord(before, victim);
  const killedPid = killed.pid!;
  await stopPid(killedPid, { signal: "SIGKILL" });
  const down = (await clustersStatus()).clusters.find((c) => c.name === victim)!;
  assert.equal(down.controllerManager?.alive, false);

  const lines: string[] = [];
  const report = await clustersUp({ names, log: (line) => lines.push(line) });
  assert.deepEqual(report.controllerManagers.restarted, [victim], lines.join("\n"));
  assert.deepEqual(report.controllerManagers.reused.sort(), names.filter((n) => n !== victim).sort());
  assert.deepEqual(Object.keys(report.namespaceDeletionSeconds).sort(), [...names].sort());
  const after = controllerManagerRecord(readStateSync()!, victim);
  assert.notEqual(after.pid, killedPid);
  const status = (await clustersStatus()).clusters.find((c) => c.name === victim)!;
  assert.deepEqual(status.controllerManager, { pid: after.pid, alive: true, healthy: true });
});
