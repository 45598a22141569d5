// The test kit end to end (src/testing, the `./testing` entry point): two real clusters of its own on free ports, the
// Website example (examples/website_operator.ts, its CRD from examples/website_resource.ts) run in-process on both,
// the cross-cluster fixture (tests/fixtures/website_mirror_operator.ts: a Website in east gets its ConfigMap in west),
// one cut off from the hub while the other is still served, then restored; a revoked credential and its renewal; an
// apiserver killed and restarted; and nothing left behind at dispose. It uses no shared local cluster, so it runs in the parallel group.

import assert from "node:assert/strict";
import { kinds } from "../mod.ts";
import { Logger } from "../hub.ts";
import { eventually, testEnv } from "../testing.ts";
import { ensureBinaries } from "../dev/build/build.ts";
import { website } from "../examples/website_operator.ts";
import { Website } from "../examples/website_resource.ts";
import { MIRROR_TO, websiteMirror } from "./fixtures/website_mirror_operator.ts";

/** This checkout's own binaries (.cache/kube-bin), unless OPERATOR_HUB_KUBE_BIN names others. */
const binaries = Deno.env.get("OPERATOR_HUB_KUBE_BIN") || (await ensureBinaries()).dir;

function processesNaming(text: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).includes(text)) found.push(Number(entry.name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

Deno.test("the Website example on two kit clusters, and a child made across them: the one cut off catches up once restored while the other is served, a revoked credential stops only its cluster, a restarted apiserver is served again, and dispose leaves nothing", async () => {
  let dir: string;
  {
    await using env = await testEnv({ clusters: ["east", "west"], crds: [Website], binaries });
    dir = env.dir;
    assert.ok(processesNaming(dir).length >= 4, "two apiservers and two controller managers run from the env's folder");
    const [namespace, mirrored] = [await env.namespace(), await env.namespace("mirrored")];
    const logs: string[] = [];
    const logger = new Logger({ level: "warn", write: (line) => logs.push(line) });
    await env.run(website, { namespaces: [namespace], logger });
    await env.run(websiteMirror, { namespaces: [mirrored] });

    // Across clusters: the cross-cluster fixture's handler in east makes its Website's ConfigMap in west.
    const annotations = { [MIRROR_TO]: "west" };
    await env.client("east", Website).create({
      metadata: { name: "m", namespace: mirrored, annotations },
      spec: { image: "web:m" },
    });
    const mirror = await eventually(
      () => env.client("west", kinds.ConfigMap).find({ namespace: mirrored, name: "m-mirror" }),
      { timeoutMs: 30_000, what: "m-mirror in west" },
    );
    assert.deepEqual(mirror.data, { image: "web:m", from: "east" });
    const site = (name: string) => ({ metadata: { name, namespace }, spec: { image: `web:${name}` } });
    const configMap = (cluster: string, name: string) => env.client(cluster, kinds.ConfigMap).find({ namespace, name });
    const wait = <T>(what: string, check: () => Promise<T>) => eventually(check, { what, timeoutMs: 30_000 });

    await env.client("east", Website).create(site("first"));
    const yaml =
      `apiVersion: examples.operator-hub.dev/v1\nkind: Website\nmetadata: {name: first, namespace: ${namespace}}\n` +
      "spec: {image: web:first}\n";
    await env.kubectl("west", ["apply", "-f", "-"], yaml);
    assert.match(
      await env.kubectl("west", ["get", "websites", "-n", namespace, "-o", "name"]),
      /website\.examples\.operator-hub\.dev\/first/,
    );
    for (const c of env.clusters) {
      await wait(`ConfigMap first in ${c}`, () => configMap(c, "first"));
      await wait(`Deployment first in ${c}`, () => env.client(c, kinds.Deployment).find({ namespace, name: "first" }));
    }

    env.cutOff("east");
    for (const c of env.clusters) await env.client(c, Website).create(site("second"));
    const served = await wait("ConfigMap second in west, east cut off", () => configMap("west", "second"));
    assert.equal(served.metadata.namespace, namespace);
    assert.equal(await configMap("east", "second"), undefined, "the hub cannot reach east while it is cut off");
    env.restore("east");
    await wait("ConfigMap second in east once restored", () => configMap("east", "second"));

    await env.expireCredential("west");
    await env.client("west", Website).create(site("third"));
    await env.client("east", Website).create(site("third"));
    await wait("ConfigMap third in east, west's credential revoked", () => configMap("east", "third"));
    const refused = (line: string) => line.includes('"cluster":"west"') && line.includes("401 Unauthorized");
    await wait("the hub's reconcile in west refused with 401", () => Promise.resolve(logs.some(refused)));
    assert.equal(await configMap("west", "third"), undefined, "west refuses the hub's revoked token");
    await env.renewCredential("west");
    await wait("ConfigMap third in west once renewed", () => configMap("west", "third"));

    // east's apiserver crashes and comes back with its objects: the hub reconnects and serves it again.
    await env.stopApiserver("east", { signal: "SIGKILL" });
    await assert.rejects(env.client("east", Website).get({ namespace, name: "first" }));
    await env.startApiserver("east");
    assert.equal((await env.client("east", Website).get({ namespace, name: "first" })).spec?.image, "web:first");
    await env.client("east", Website).create(site("fourth"));
    await wait("ConfigMap fourth in east after its apiserver restarted", () => configMap("east", "fourth"));
  }
  assert.deepEqual(processesNaming(dir), [], "no process of the environment is left");
  await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
});
