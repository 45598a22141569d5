// Unit tests of the shard Lease names: valid DNS-1123 names, distinct for distinct identities and clusters.

import assert from "node:assert/strict";
import { fenceLeaseName, peerLeaseName } from "./lease_names.ts";

const DNS_1123 = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

Deno.test("peerLeaseName and fenceLeaseName are GROUP-peer-… and GROUP-fence-… with a hash of the full name", () => {
  assert.match(peerLeaseName("hub", "host-1_ab12"), /^hub-peer-host-1-ab12-[0-9a-f]{8}$/);
  assert.match(fenceLeaseName("hub", "prod"), /^hub-fence-prod-[0-9a-f]{8}$/);
  assert.equal(peerLeaseName("hub", "x"), peerLeaseName("hub", "x"), "the same input gives the same name");
});

Deno.test("Lease names stay valid DNS-1123 names for any identity or cluster name, however long or odd", () => {
  for (const text of ["Host_Name.Example", "--x--", "ü/ß@", "", "a".repeat(300), "UPPER CASE"]) {
    for (const name of [peerLeaseName("hub", text), fenceLeaseName("hub", text)]) {
      assert.match(name, DNS_1123, name);
      assert.ok(name.length <= 253, `${name.length} characters`);
    }
  }
});

Deno.test("Names that slug or truncate alike still get distinct Lease names", () => {
  const alike = ["Prod", "prod", "pr.od", "pr_od", "a".repeat(70), "a".repeat(71)];
  assert.equal(new Set(alike.map((c) => fenceLeaseName("g", c))).size, alike.length);
  assert.equal(new Set(alike.map((c) => peerLeaseName("g", c))).size, alike.length);
  assert.notEqual(peerLeaseName("g", "x"), fenceLeaseName("g", "x"), "a peer and a fence never share a name");
});
