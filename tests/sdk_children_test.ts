// End-to-end: the Website example (examples/website_operator.ts) on prod, staging and dev: children created and adopted,
// the Deployment following spec.image, a child deleted by hand recreated, the Website deleted and its children collected
// by the controller manager, a SIGKILL in the middle of creating with no child created twice, and the writes per object
// counted by proxies in front of the apiservers (every request of the hub passes through them).
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver is checked by the test itself.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import type { InterceptProxy, InterceptRecord } from "./support/intercept_proxy.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";
import { applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
/** The hub reaches each cluster through its proxy, under this context name. */
const via = (c: string) => `${c}-via-proxy`;
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const OPERATOR_FILE = "examples/website_operator.ts";
const CHILDREN = [["", "configmaps"], ["apps", "deployments"], ["", "services"]] as const;

function website(namespace: string, name: string, image: string): string {
  return `apiVersion: examples.operator-hub.dev/v1\nkind: Website\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n` +
    `spec:\n  image: ${image}\n  content: hello from ${name}\n`;
}

const childPath = (ns: string, group: string, plural: string, name = "") =>
  `${group ? `/apis/${group}/v1` : "/api/v1"}/namespaces/${ns}/${plural}${name ? `/${name}` : ""}`;

/** The three children of Website `name`, or undefined until all exist. */
async function childrenOf(api: ReturnType<typeof localApi>, ns: string, name: string): Promise<any[] | undefined> {
  const found = await Promise.all(CHILDREN.map(([g, p]) => api.find(childPath(ns, g, p, name))));
  return found.every(Boolean) ? found : undefined;
}

const isWrite = (r: InterceptRecord) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method);

Deno.test("The Website example on prod, staging and dev: children adopted, the image followed, a deleted child recreated, children collected with their parent, no child created twice across a SIGKILL, writes counted", async () => {
  const started = performance.now();
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  const ns = await testNamespace("sdk-children");
  const apis = CLUSTERS.map((c) => localApi(c));
  const proxies: InterceptProxy[] = await Promise.all(CLUSTERS.map((c) => proxyInFrontOf(c)));
  const dir = await Deno.makeTempDir({ prefix: "sdk-children-" });
  const kubeconfigs = await Promise.all(CLUSTERS.map(async (c, i) => {
    const file = `${dir}/${c}.yaml`;
    await Deno.writeTextFile(file, adminKubeconfigVia(c, proxies[i].url, via(c)));
    return file;
  }));
  // prod's proxy holds the first Service POST of Website "held" until the hub that sent it is gone, then answers 503
  // without forwarding it: the hub dies between creating held's Deployment and its Service.
  let heldSeen!: () => void;
  const held = new Promise<void>((r) => heldSeen = r);
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let holding = true;
  // Every create the hub sends, by cluster, resource and name (the proxies' records hold only the collection path), with
  // the scenario's step it was sent in.
  let step = "create";
  const sent: { step: string; child: string }[] = [];
  for (const [i, c] of CLUSTERS.entries()) {
    proxies[i].hook = async (req) => {
      if (req.method !== "POST" || !req.path.includes(`/namespaces/${ns.name}/`)) return undefined;
      const name = JSON.parse(req.body).metadata?.name;
      sent.push({ step, child: `${c} ${req.path.split("/").pop()} ${name}` });
      if (!holding || c !== "prod" || req.path !== childPath(ns.name, "", "services") || name !== "held") {
        return undefined;
      }
      holding = false;
      heldSeen();
      await released;
      return new Response('{"kind":"Status","code":503}', { status: 503 });
    };
  }
  const start = () =>
    HubProcess.start({
      clusters: CLUSTERS.map(via),
      kubeconfigs,
      args: ["--namespace", ns.name, "--operators", "none", OPERATOR_FILE],
    });
  let hub = start();
  try {
    await hub.waitReady();
    await Promise.all(
      CLUSTERS.map((c) => kubectlOk(c, ["apply", "-f", "-"], { stdin: website(ns.name, "site", "web:1") })),
    );
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: website(ns.name, "held", "web:1") });

    // Objects created in each cluster, adopted: controller owner reference to the Website, its labels.
    for (const [i, c] of CLUSTERS.entries()) {
      const kids = await waitFor(() => childrenOf(apis[i], ns.name, "site"), `${c}: site's three children`, 30_000);
      const parent = await apis[i].request(
        "GET",
        `/apis/examples.operator-hub.dev/v1/namespaces/${ns.name}/websites/site`,
      );
      for (const kid of kids) {
        assert.deepEqual(kid.metadata.ownerReferences, [{
          apiVersion: "examples.operator-hub.dev/v1",
          kind: "Website",
          name: "site",
          uid: parent.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        }], `${c} ${kid.kind}`);
        assert.equal(kid.metadata.labels["operator-hub.dev/parent-name"], "site");
      }
      assert.equal(kids[1].spec.template.spec.containers[0].image, "web:1");
      assert.equal(kids[0].data["index.html"], "hello from site");
    }
    // SIGKILL in the middle of creating held's children (its ConfigMap and Deployment exist, its Service does not).
    await held;
    const heldBefore = await Promise.all(
      CHILDREN.slice(0, 2).map(([g, p]) => apis[0].find(childPath(ns.name, g, p, "held"))),
    );
    assert.ok(heldBefore.every(Boolean), "held's ConfigMap and Deployment were created before the kill");
    assert.equal((await hub.kill()).signal, "SIGKILL");
    step = "restart";
    release();
    hub = start();
    await hub.waitReady();
    const heldKids = await waitFor(
      () => childrenOf(apis[0], ns.name, "held"),
      "held's Service after the restart",
      30_000,
    );
    assert.deepEqual(
      heldKids.slice(0, 2).map((k) => k.metadata.uid),
      heldBefore.map((k) => k.metadata.uid),
      "the ConfigMap and Deployment made before the kill were kept, not made again",
    );

    // The field change applied to the Deployment, in each cluster.
    step = "field change";
    for (const c of CLUSTERS) {
      await kubectlOk(c, [
        "patch",
        "website",
        "site",
        "-n",
        ns.name,
        "--type",
        "merge",
        "-p",
        '{"spec":{"image":"web:2"}}',
      ]);
    }
    for (const [i, c] of CLUSTERS.entries()) {
      await waitFor(
        async () => {
          const d = await apis[i].find(childPath(ns.name, "apps", "deployments", "site"));
          return d?.spec.template.spec.containers[0].image === "web:2";
        },
        `${c}: the Deployment runs web:2`,
        30_000,
      );
    }

    // A child deleted by hand is recreated (owns requeues the Website, its level-based handler creates what is missing).
    const hand = [["staging", "", "configmaps"], ["dev", "apps", "deployments"]] as const;
    step = "deleted by hand";
    for (const [c, g, p] of hand) {
      const api = apis[CLUSTERS.indexOf(c)];
      const before = await api.request("GET", childPath(ns.name, g, p, "site"));
      await api.request("DELETE", childPath(ns.name, g, p, "site"));
      const again = await waitFor(
        async () => {
          const o = await api.find(childPath(ns.name, g, p, "site"));
          return o && o.metadata.uid !== before.metadata.uid ? o : undefined;
        },
        `${c}: ${p}/site recreated`,
        30_000,
      );
      if (p === "deployments") assert.equal(again.spec.template.spec.containers[0].image, "web:2", "recreated at spec");
    }

    // The Website deleted: the controller manager's garbage collector deletes its children.
    // prod's Website watch lags by 1.5 s, as on a loaded machine: the collector deletes site's children while the hub
    // still holds site, so it may create them again; those are collected too (checked below).
    step = "parent deleted";
    proxies[0].streamDelayMs = (path) => path.endsWith("/websites") ? 1_500 : 0;
    const parentDeletedAt = performance.now();
    await apis[0].request("DELETE", `/apis/examples.operator-hub.dev/v1/namespaces/${ns.name}/websites/site`);
    await waitFor(
      async () => {
        const left = await Promise.all(CHILDREN.map(([g, p]) => apis[0].find(childPath(ns.name, g, p, "site"))));
        return left.every((o) => o === undefined);
      },
      "prod: site's children collected",
      30_000,
    );

    // Writes per object, as the apiservers answered them through the proxies (only this namespace's objects).
    // Counted up to the Website's deletion. After it, the hub may create one of its children once more: its watch of
    // Websites can lag the garbage collector's deletion of a child, which requeues the Website still in its cache (as in
    // controller-runtime or kube-rs); the collector deletes that child again, which is checked below.
    const records = proxies.flatMap((p) =>
      p.seen((r) => isWrite(r) && r.path.includes(`/namespaces/${ns.name}/`) && r.at < parentDeletedAt)
    );
    const posts = sent.filter((s) => s.step !== "parent deleted").map((s) => s.child);
    const late = sent.filter((s) => s.step === "parent deleted").map((s) => s.child);
    const statusWrites = (name: string) =>
      records.filter((r) => r.method === "PATCH" && r.path.endsWith(`/websites/${name}/status`) && r.status < 300);
    const creates = records.filter((r) => r.method === "POST" && r.status === 201);
    const rejected = records.filter((r) => !r.synthetic && r.status >= 400);
    const creations = CLUSTERS.length + 1; // site in each cluster, held in prod
    const expectedCreates = creations * 3 + hand.length;
    console.log(
      `figure: website status writes for site (creation + 1 field change), per cluster: ${
        CLUSTERS.map((_, i) =>
          proxies[i].seen((r) => r.method === "PATCH" && r.path.endsWith("/websites/site/status")).length
        )
          .join(", ")
      }`,
    );
    console.log(
      `figure: website status writes for held (creation, across the SIGKILL): ${statusWrites("held").length}`,
    );
    console.log(
      `figure: writes per Website over the scenario: ${
        (records.filter((r) => !r.synthetic).length / creations).toFixed(2)
      } ` +
        `(${records.length} writes for ${creations} Websites: ${creates.length} child creates, ` +
        `${
          records.filter((r) => r.method === "PATCH" && r.path.includes("/deployments/")).length
        } Deployment patches, ` +
        `${statusWrites("site").length + statusWrites("held").length} status writes, ${rejected.length} rejected)`,
    );
    // The hub lists and watches the owned kinds only through the adopt label: it never caches unrelated objects.
    const collections = CHILDREN.map(([g, p]) => childPath(ns.name, g, p));
    const lists = proxies.flatMap((p) => p.seen((r) => r.method === "GET" && collections.includes(r.path)));
    assert.ok(lists.length >= CLUSTERS.length * CHILDREN.length, `the owned kinds are watched: ${lists.length} lists`);
    const selector = "labelSelector=operator-hub.dev%2Fparent-resource%3Dwebsites.examples.operator-hub.dev";
    assert.deepEqual(lists.filter((r) => !r.query.includes(selector)).map((r) => `${r.path}${r.query}`), []);
    assert.deepEqual(rejected.map((r) => `${r.method} ${r.path} ${r.status}`), [], "no rejected write");
    assert.equal(
      statusWrites("site").length,
      2 * CLUSTERS.length,
      "one status write at creation, one per field change",
    );
    assert.equal(statusWrites("held").length, 1, "one status write for held, after the restart");
    // No child created twice: one create per child (held's Service twice: the one the proxy refused with 503 at the
    // kill, then the one that made it), one per recreation by hand, and no create answered 409 AlreadyExists.
    const perChild = new Map<string, number>();
    for (const post of posts) perChild.set(post, (perChild.get(post) ?? 0) + 1);
    const twice = [...perChild].filter(([, n]) => n > 1).map(([k, n]) => `${k}: ${n}`);
    const handKeys = hand.map(([c, , p]) => `${c} ${p} site: 2`);
    assert.deepEqual(
      twice.sort(),
      ["prod services held: 2", ...handKeys].sort(),
      `children created more than once; creates by step: ${sent.map((s) => `${s.step}: ${s.child}`).join("; ")}`,
    );
    assert.equal(perChild.size, creations * 3, `every child created: ${JSON.stringify([...perChild])}`);
    assert.equal(creates.length, expectedCreates, "child creates answered 201");
    console.log(
      `figure: child creates sent ${posts.length} for ${perChild.size} children (${hand.length} deleted by hand)`,
    );
    assert.equal(records.filter((r) => r.method === "POST" && r.status === 409).length, 0, "no create answered 409");
    assert.deepEqual(late.filter((c) => !/^prod \w+ site$/.test(c)), [], "after the deletion, only site's children");
    {
      console.log(`figure: ${late.length} child(ren) created again after their Website's deletion: ${late.join(", ")}`);
      await waitFor(
        async () => {
          const left = await Promise.all(CHILDREN.map(([g, p]) => apis[0].find(childPath(ns.name, g, p, "site"))));
          return left.every((o) => o === undefined);
        },
        "prod: site's children created after its deletion collected",
        60_000,
      );
      // Once collected, they stay collected: the hub has seen site go.
      await new Promise((r) => setTimeout(r, 3_000));
      const left = await Promise.all(CHILDREN.map(([g, p]) => apis[0].find(childPath(ns.name, g, p, "site"))));
      assert.deepEqual(left.filter(Boolean).map((o) => o.kind), [], "no child of site left after its deletion");
    }
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
    console.log(`figure: sdk_children scenario wall time ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    release();
    await hub.kill();
    await Promise.all(proxies.map((p) => p.close()));
    apis.forEach((a) => a.close());
    await Deno.remove(dir, { recursive: true });
    await ns.cleanup();
  }
});
