// Tests of the hostile kubeconfig generator: sizes, counts and the one real context each text carries.

import assert from "node:assert/strict";
import { load } from "js-yaml";
import { parse } from "yaml";
import { baseKubeconfig, hostileKubeconfig, type HostileShape } from "./hostile_kubeconfig.ts";

const target = {
  name: "victim",
  server: "https://127.0.0.1:6443",
  caPem: "-----BEGIN CERTIFICATE-----\n",
  token: "t0k",
};

Deno.test("baseKubeconfig() is a kubeconfig of the one target context, its current-context", () => {
  const doc = parse(baseKubeconfig(target));
  assert.equal(doc["current-context"], "victim");
  assert.deepEqual(doc.contexts, [{ name: "victim", context: { cluster: "victim", user: "victim" } }]);
  assert.equal(doc.clusters[0].cluster.server, target.server);
  assert.equal(atob(doc.clusters[0].cluster["certificate-authority-data"]), target.caPem);
  assert.equal(doc.users[0].user.token, "t0k");
});

Deno.test("hostileKubeconfig() pads each shape to within a few hundred bytes of the size asked for, never over it", () => {
  for (const shape of ["anchors", "alias-bomb", "keys"] as HostileShape[]) {
    for (const size of [4_096, 131_072, 1_048_000]) {
      const text = hostileKubeconfig(shape, target, size);
      assert.ok(text.length <= size && text.length > size - 400, `${shape} ${size}: ${text.length}`);
      assert.equal(text, hostileKubeconfig(shape, target, size), "deterministic");
    }
  }
  assert.throws(() => hostileKubeconfig("anchors", target, 100), /cannot hold the base kubeconfig/);
});

Deno.test("hostileKubeconfig() writes one anchor every 43 bytes, each aliased once: ~24,000 in 1 MiB", () => {
  const text = hostileKubeconfig("anchors", target, 1_048_000);
  const anchors = text.match(/&anchor-\d+/g)!.length;
  assert.equal(text.match(/\*anchor-\d+/g)!.length, anchors);
  assert.ok(anchors > 23_000 && anchors < 25_000, `${anchors} anchors`);
  // Small enough for the quadratic parser to read in a test: the target is still there.
  assert.equal(parse(hostileKubeconfig("anchors", target, 4_096))["current-context"], "victim");
});

Deno.test("hostileKubeconfig() writes ten levels of an alias bomb, and `count` contexts, users and clusters", () => {
  const bomb = hostileKubeconfig("alias-bomb", target, 131_072);
  assert.equal(bomb.match(/^x-lol\d+: &lol\d+ \[/gm)!.length, 10);
  const many = parse(hostileKubeconfig("contexts", target, 500));
  for (const list of ["contexts", "users", "clusters"]) assert.equal(many[list].length, 500);
  assert.equal(many["current-context"], "victim");
  const keys = (load(hostileKubeconfig("keys", target, 131_072)) as Record<string, object>)["x-keys"];
  assert.ok(Object.keys(keys).length > 9_000, `${Object.keys(keys).length} keys`);
});
