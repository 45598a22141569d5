// End-to-end: the Website operator in Kopf's create-handler form (tests/fixtures/website_create_operator.ts) on prod,
// staging and dev, through counting proxies in front of the apiservers. A burst of 10 Websites per cluster; once 3
// create handlers have written their done-marks, the proxies stop forwarding the hub's writes (held in flight, never
// applied) and the hub is SIGKILLed; a new hub finishes the rest. Counted at the apiservers: each create handler's
// runs (its record, a ConfigMap in a second namespace), child creates (201 and 409), status writes, patches.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver is checked by the test itself.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { type InterceptProxy, type InterceptRecord, statusResponse } from "./support/intercept_proxy.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";
import { applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const via = (c: string) => `${c}-via-proxy`;
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const OPERATOR_FILE = "tests/fixtures/website_create_operator.ts";
const HANDLER = "createChildren";
const PER_CLUSTER = 10;
const NAMES = Array.from({ length: PER_CLUSTER }, (_, i) => `w${i}`);
const CHILDREN = [["", "configmaps"], ["apps", "deployments"], ["", "services"]] as const;
const WEBSITES = "/apis/examples.operator-hub.dev/v1";

const childPath = (ns: string, group: string, plural: string) =>
  `${group ? `/apis/${group}/v1` : "/api/v1"}/namespaces/${ns}/${plural}`;
/** The adopted children in a collection (not the namespace's kube-root-ca.crt ConfigMap). */
const ADOPTED = "?labelSelector=operator-hub.dev%2Fparent-resource%3Dwebsites.examples.operator-hub.dev";
const isWrite = (r: { method: string }) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method);
const marked = (w: any) => w.status?.handlers?.create?.[HANDLER]?.done === true;

Deno.test("Create-handler form: a SIGKILL in the middle of a burst of 30 Websites runs no finished create handler again and each interrupted one once more, every Website gets its children, and the writes are the minimum", async () => {
  const started = performance.now();
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  const ns = await testNamespace("sdk-create");
  const runsNs = await testNamespace("sdk-create-runs");
  const apis = CLUSTERS.map((c) => localApi(c));
  const proxies: InterceptProxy[] = await Promise.all(CLUSTERS.map((c) => proxyInFrontOf(c)));
  const dir = await Deno.makeTempDir({ prefix: "sdk-create-" });
  const kubeconfigs = await Promise.all(CLUSTERS.map(async (c, i) => {
    const file = `${dir}/${c}.yaml`;
    await Deno.writeTextFile(file, adminKubeconfigVia(c, proxies[i].url, via(c)));
    return file;
  }));
  const inNs = (r: InterceptRecord) => r.path.includes(`/namespaces/${ns.name}/`);
  const marksLanded = () =>
    proxies.reduce(
      (n, p) => n + p.seen((r) => r.method === "PATCH" && r.path.endsWith("/status") && r.status === 200).length,
      0,
    );
  // Frozen: every write the hub sends is held (never forwarded) until the hub is dead, then answered 503.
  let frozen = false;
  let held = 0;
  let frozeAt = "";
  let froze!: () => void;
  const freezing = new Promise<void>((r) => froze = r);
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  for (const [i, c] of CLUSTERS.entries()) {
    proxies[i].hook = async (req) => {
      if (!isWrite(req)) return undefined;
      if (!frozen) {
        if (frozeAt) return undefined; // once only: the new hub's writes go through
        const child = req.method === "POST" && CHILDREN.some(([g, p]) => req.path === childPath(ns.name, g, p));
        if (!child || marksLanded() < 3) return undefined;
        frozen = true;
        frozeAt = `${c} POST ${req.path.split("/").pop()} ${JSON.parse(req.body).metadata?.name}`;
        froze();
      }
      held++;
      await released;
      return statusResponse(503, "ServiceUnavailable", "held by the test until the hub was killed");
    };
  }
  const env = { WEBSITE_RUNS_NAMESPACE: runsNs.name };
  const start = () =>
    HubProcess.start({
      clusters: CLUSTERS.map(via),
      kubeconfigs,
      env,
      args: ["--namespace", ns.name, "--operators", "none", OPERATOR_FILE],
    });
  let hub = start();
  try {
    await hub.waitReady();
    const oldPid = String(hub.pid);
    // The burst: 10 Websites per cluster, all at once.
    await Promise.all(
      CLUSTERS.flatMap((_, i) =>
        NAMES.map((name) =>
          apis[i].request("POST", `${WEBSITES}/namespaces/${ns.name}/websites`, {
            apiVersion: "examples.operator-hub.dev/v1",
            kind: "Website",
            metadata: { name },
            spec: { image: "web:1", content: `hello from ${name}` },
          })
        )
      ),
    );
    await Promise.race([
      freezing,
      waitFor(() => false, "3 done-marks, then a child create to hold (the hub finished the burst first?)", 30_000),
    ]);
    assert.equal((await hub.kill()).signal, "SIGKILL");
    // Everything the dead hub had forwarded before the freeze is answered; only the held writes stay pending.
    await waitFor(
      () =>
        proxies.every((p) => p.seen((r) => isWrite(r) && r.status === 0).length <= held) &&
        proxies.reduce((n, p) => n + p.seen((r) => isWrite(r) && r.status === 0).length, 0) === held,
      "the dead hub's forwarded writes answered",
      10_000,
      50,
    );
    // What the apiservers hold at the kill: the done-marks, the runs recorded, the children made.
    const before = await Promise.all(CLUSTERS.map(async (_, i) => {
      const sites = (await apis[i].request("GET", `${WEBSITES}/namespaces/${ns.name}/websites`)).items;
      const kids = await Promise.all(
        CHILDREN.map(async ([g, p]) =>
          (await apis[i].request("GET", childPath(ns.name, g, p) + ADOPTED)).items.map((o: any) =>
            o.metadata.name
          ) as string[]
        ),
      );
      return { marked: new Set<string>(sites.filter(marked).map((w: any) => w.metadata.name)), kids };
    }));
    const runsAt = async () =>
      (await Promise.all(
        CLUSTERS.map(async (c, i) =>
          (await apis[i].request("GET", `/api/v1/namespaces/${runsNs.name}/configmaps?labelSelector=website`)).items
            .map((o: any) => {
              assert.equal(o.metadata.labels.cluster, via(c));
              return { key: `${c}/${o.metadata.labels.website}`, pid: o.metadata.labels.pid };
            })
        ),
      )).flat() as { key: string; pid: string }[];
    const oldRuns = await runsAt();
    const markedBefore = CLUSTERS.flatMap((c, i) => [...before[i].marked].map((n) => `${c}/${n}`));
    const interrupted = [...new Set(oldRuns.map((r) => r.key))].filter((k) => !markedBefore.includes(k));
    // Children the interrupted runs made before the kill: their second run finds them and keeps them.
    const madeByInterrupted = CLUSTERS.reduce(
      (n, c, i) =>
        n +
        before[i].kids.reduce((m, names) => m + names.filter((name) => interrupted.includes(`${c}/${name}`)).length, 0),
      0,
    );
    console.log(
      `figure: at the SIGKILL (froze at ${frozeAt}): ${markedBefore.length} Websites done, ${interrupted.length} ` +
        `create handlers in flight (${madeByInterrupted} of their children made), ${held} writes held in flight, ` +
        `${CLUSTERS.length * PER_CLUSTER - markedBefore.length - interrupted.length} not started`,
    );
    assert.ok(markedBefore.length >= 3, `done before the kill: ${markedBefore}`);
    assert.ok(interrupted.length >= 1, "at least one create handler was in flight at the kill");

    release();
    frozen = false;
    const heldWrites = held;
    hub = start();
    await hub.waitReady();
    for (const [i, c] of CLUSTERS.entries()) {
      await waitFor(
        async () => {
          const sites = (await apis[i].request("GET", `${WEBSITES}/namespaces/${ns.name}/websites`)).items;
          if (sites.filter(marked).length !== PER_CLUSTER) return false;
          const kids = await Promise.all(
            CHILDREN.map(([g, p]) => apis[i].request("GET", childPath(ns.name, g, p) + ADOPTED)),
          );
          return kids.every((k) => k.items.length === PER_CLUSTER);
        },
        `${c}: every Website done with its three children`,
        20_000,
      ).catch(async (err) => {
        const sites = (await apis[i].request("GET", `${WEBSITES}/namespaces/${ns.name}/websites`)).items;
        throw new Error(
          `${err.message}\nundone: ${sites.filter((w: any) => !marked(w)).map((w: any) => w.metadata.name)}\n${
            hub.tail(40)
          }`,
        );
      });
    }
    // One field change per cluster: the update handler patches the Deployment, one status write records the spec.
    for (const [i, c] of CLUSTERS.entries()) {
      await apis[i].request("PATCH", `${WEBSITES}/namespaces/${ns.name}/websites/w0`, { spec: { image: "web:2" } });
      await waitFor(
        async () => {
          const w = await apis[i].request("GET", `${WEBSITES}/namespaces/${ns.name}/websites/w0`);
          const d = await apis[i].request("GET", `${childPath(ns.name, "apps", "deployments")}/w0`);
          return d.spec.template.spec.containers[0].image === "web:2" &&
            String(w.status?.handlers?.lastSpec).includes("web:2");
        },
        `${c}: w0's Deployment runs web:2`,
        15_000,
      );
    }
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());

    // Runs of the create handler, as recorded at the apiservers.
    const runs = await runsAt();
    const perObject = new Map<string, { old: number; new: number }>();
    for (const r of runs) {
      const e = perObject.get(r.key) ?? { old: 0, new: 0 };
      e[r.pid === oldPid ? "old" : "new"]++;
      perObject.set(r.key, e);
    }
    const all = CLUSTERS.flatMap((c) => NAMES.map((n) => `${c}/${n}`));
    assert.deepEqual([...perObject.keys()].sort(), all.sort(), "every Website's create handler ran");
    for (const key of all) {
      const e = perObject.get(key)!;
      assert.ok(e.old <= 1, `${key}: the first hub ran its create handler ${e.old} times`);
      if (markedBefore.includes(key)) assert.equal(e.new, 0, `${key}: done before the kill, run again after it`);
      else assert.equal(e.new, 1, `${key}: not done at the kill, run ${e.new} times after it`);
    }
    const twice = all.filter((k) => perObject.get(k)!.old + perObject.get(k)!.new > 1);
    assert.deepEqual(twice.sort(), interrupted.sort(), "only the handlers in flight at the kill ran a second time");

    // Writes in the test namespace, as the apiservers answered them (held writes were never forwarded).
    const records = proxies.map((p) => p.seen((r) => isWrite(r) && inNs(r) && !r.synthetic));
    const flat = records.flat();
    const statusWrites = flat.filter((r) => r.method === "PATCH" && r.path.endsWith("/status"));
    const creates201 = flat.filter((r) => r.method === "POST" && r.status === 201);
    const creates409 = flat.filter((r) => r.method === "POST" && r.status === 409);
    const patches = flat.filter((r) => r.method === "PATCH" && r.path.includes("/deployments/"));
    const rejected = flat.filter((r) => r.status >= 400);
    const other = flat.filter((r) => ![...statusWrites, ...creates201, ...creates409, ...patches].includes(r));
    const objects = all.length;
    console.log(
      `figure: create-handler form, writes at the apiservers for ${objects} Websites across the SIGKILL: ` +
        `${flat.length} (${creates201.length} child creates 201, ${creates409.length} answered 409, ` +
        `${statusWrites.length} status writes, ${patches.length} Deployment patches, ${other.length} other); ` +
        `${heldWrites} held writes never reached them`,
    );
    console.log(
      `figure: create-handler form, writes per Website: creation ${
        ((creates201.length + statusWrites.length - CLUSTERS.length) / objects).toFixed(2)
      } (3 child creates + 1 status write), field change ${
        ((patches.length + CLUSTERS.length) / CLUSTERS.length).toFixed(2)
      } (1 Deployment patch + 1 status write), ${rejected.length} rejected writes`,
    );
    assert.deepEqual(other.map((r) => `${r.method} ${r.path} ${r.status}`), [], "no other write");
    assert.equal(creates201.length, 3 * objects, "each child created once");
    assert.deepEqual(rejected.map((r) => `${r.method} ${r.path} ${r.status}`), [], "no rejected write");
    assert.equal(creates409.length, 0, "no create answered 409: a re-run reads what its first run made");
    assert.equal(statusWrites.length, objects + CLUSTERS.length, "one status write per creation and field change");
    assert.deepEqual(statusWrites.filter((r) => r.status !== 200).map((r) => `${r.path} ${r.status}`), []);
    assert.equal(patches.filter((r) => r.status === 200).length, CLUSTERS.length, "one patch per field change");
    // Each Website's done-mark written exactly once (w0's second status write is its field change).
    for (const [i, c] of CLUSTERS.entries()) {
      for (const name of NAMES) {
        const n = records[i].filter((r) => r.path.endsWith(`/websites/${name}/status`)).length;
        assert.equal(n, name === "w0" ? 2 : 1, `${c}/${name}: status writes`);
      }
    }
    console.log(`figure: sdk_create_handler scenario wall time ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    release();
    await hub.kill();
    await Promise.all(proxies.map((p) => p.close()));
    apis.forEach((a) => a.close());
    await Deno.remove(dir, { recursive: true });
    await ns.cleanup();
    await runsNs.cleanup();
  }
});
