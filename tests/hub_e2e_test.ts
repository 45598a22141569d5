// End-to-end: one hub process serves Uuids in prod, staging and dev on real kube-apiservers.

import assert from "node:assert/strict";
import { DirectApi, UUID_V4, waitFor } from "./support/direct_api.ts";
import { HubProcess } from "./support/hub_process.ts";
import { kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];

function uuidManifest(namespace: string, name: string): string {
  return `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;
}

async function allAssigned(api: DirectApi, namespace: string, count: number): Promise<Map<string, unknown>> {
  return await waitFor(
    async () => {
      const m = await api.uuidsOf(namespace);
      return m.size === count && [...m.values()].every((u) => typeof u === "string" && UUID_V4.test(u)) ? m : undefined;
    },
    `${count} Uuids with a UUID in ${api.ep.name}/${namespace}`,
    120_000,
  );
}

Deno.test("The hub gives every Uuid applied with kubectl in prod, staging and dev one v4 UUID and state Ok, with one write each", async () => {
  const ns = await testNamespace("e2e");
  const apis = CLUSTERS.map((c) => new DirectApi(c));
  const writesBefore = await Promise.all(apis.map((a) => a.uuidWrites()));
  const hub = HubProcess.start({ clusters: CLUSTERS });
  try {
    await hub.waitReady();
    for (const c of CLUSTERS) {
      const file = await Deno.makeTempFile({ suffix: ".yaml" });
      await Deno.writeTextFile(file, [1, 2, 3].map((i) => uuidManifest(ns.name, `item-${i}`)).join("---\n"));
      await kubectlOk(c, ["apply", "-f", file]);
      await Deno.remove(file);
    }
    const assigned = await Promise.all(apis.map((a) => allAssigned(a, ns.name, 3)));
    for (const [i, c] of CLUSTERS.entries()) {
      const out = await kubectlOk(c, ["get", "id", "-n", ns.name]);
      const header = out.split("\n")[0];
      assert.match(header, /NAME\s+UUID\s+STATUS/, `${c}: kubectl get id header: ${header}`);
      for (const [name, uuid] of assigned[i]) {
        assert.match(out, new RegExp(`${name}\\s+${uuid}\\s+Ok`), `${c}: row for ${name} in\n${out}`);
      }
      const objs = await apis[i].listUuids(ns.name);
      for (const o of objs) {
        assert.equal(o.status.state, "Ok");
        assert.equal(typeof o.status.message, "string");
      }
    }
    // Our own write comes back as a watch event; it must cost no second write. Give it time to show.
    await new Promise((r) => setTimeout(r, 2000));
    const status = (await hub.get("/status")).body;
    for (const c of CLUSTERS) assert.equal(status.clusters[c].state, "watching", JSON.stringify(status));
    const writesAfter = await Promise.all(apis.map((a) => a.uuidWrites()));
    for (const [i, c] of CLUSTERS.entries()) {
      assert.equal(writesAfter[i] - writesBefore[i], 3, `${c}: apiserver_request_total PATCH uuid delta`);
    }
    const code = (await hub.stop("SIGTERM")).code;
    assert.equal(code, 0, `exit code after SIGTERM\n${hub.tail()}`);
  } finally {
    await hub.kill();
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});
