// Unit tests for ObjectIndexes: entries follow objects as they change, go with them and with their cluster.
import assert from "node:assert/strict";
import type { StoredObject } from "../runtime/mod.ts";
import { ObjectIndexes } from "./indexes.ts";
import { OperatorDefinitionError } from "./define_operator.ts";

const obj = (name: string, owner?: string, namespace = "ns"): StoredObject => ({
  metadata: { name, namespace, uid: `uid-${name}` },
  spec: owner === undefined ? {} : { owner },
});
const byOwner = (o: StoredObject) => {
  const owner = (o.spec as { owner?: string }).owner;
  return owner ? { [owner]: o.metadata.name } : undefined;
};

Deno.test("An index holds every object's value under its key, across clusters, and follows a changed key", () => {
  const idx = new ObjectIndexes({ byOwner });
  idx.changed({ cluster: "prod", namespace: "ns", name: "a" }, obj("a", "team-1"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "b" }, obj("b", "team-1"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "c" }, obj("c", "team-2"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "d" }, obj("d"));
  const view = idx.view.byOwner;
  assert.deepEqual(view.get("team-1").sort(), ["a", "b"]);
  assert.deepEqual(view.entries("team-2"), [{ cluster: "dev", namespace: "ns", name: "c", value: "c" }]);
  assert.deepEqual(view.keys().sort(), ["team-1", "team-2"]);
  assert.equal(view.size, 2);
  // b moves to team-2: its old entry goes.
  idx.changed({ cluster: "dev", namespace: "ns", name: "b" }, obj("b", "team-2"));
  assert.deepEqual(view.get("team-1"), ["a"]);
  assert.deepEqual(view.get("team-2").sort(), ["b", "c"]);
  // The same name in another cluster is another object.
  idx.changed({ cluster: "dev", namespace: "ns", name: "a" }, obj("a", "team-1"));
  assert.deepEqual(view.entries("team-1").map((e) => e.cluster).sort(), ["dev", "prod"]);
});

Deno.test("A gone object and a forgotten cluster leave every index; other clusters keep theirs", () => {
  const idx = new ObjectIndexes({ byOwner, all: (o) => ({ all: o.metadata.name }) });
  idx.changed({ cluster: "prod", namespace: "ns", name: "a" }, obj("a", "t"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "b" }, obj("b", "t"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "c" }, obj("c", "t"));
  idx.changed({ cluster: "dev", namespace: "ns", name: "c" }, undefined);
  assert.deepEqual(idx.view.byOwner.get("t").sort(), ["a", "b"]);
  idx.forget("dev");
  assert.deepEqual(idx.view.byOwner.get("t"), ["a"]);
  assert.deepEqual(idx.view.all.get("all"), ["a"]);
  assert.equal(idx.view.byOwner.has("missing"), false);
  assert.deepEqual(idx.view.byOwner.get("missing"), []);
  idx.forget("prod");
  assert.equal(idx.view.byOwner.size, 0);
  assert.equal(idx.view.all.size, 0);
});

Deno.test("An index function that throws leaves that object out of that index only, and the error names it", () => {
  const idx = new ObjectIndexes({
    byOwner,
    picky: (o) => {
      if (o.metadata.name === "bad") throw new Error("no owner");
      return { ok: o.metadata.name };
    },
  });
  idx.changed({ cluster: "prod", namespace: "ns", name: "good" }, obj("good", "t"));
  assert.throws(
    () => idx.changed({ cluster: "prod", namespace: "ns", name: "bad" }, obj("bad", "t")),
    /index picky failed on ns\/bad in cluster prod: no owner/,
  );
  assert.deepEqual(idx.view.byOwner.get("t").sort(), ["bad", "good"]);
  assert.deepEqual(idx.view.picky.get("ok"), ["good"]);
  assert.throws(() => new ObjectIndexes({ nope: 3 as never }), OperatorDefinitionError);
  assert.equal(new ObjectIndexes(undefined).defined, false);
});
