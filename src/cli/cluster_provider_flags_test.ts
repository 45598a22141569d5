// Unit tests for --cluster-api and --cluster-name-prefix.
import assert from "node:assert/strict";
import {
  CLUSTER_API_ALL_NAMESPACES,
  clusterProviderHelp,
  parseClusterProviderFlags,
} from "./cluster_provider_flags.ts";
import { CLUSTER_API_ALL_NAMESPACES as PROVIDER_ALL } from "../hub/providers/mod.ts";
import { FlagError } from "./flag_values.ts";
import { parseFlags } from "./flags.ts";

Deno.test("parseClusterProviderFlags defaults to no Cluster API provider and no prefixes", () => {
  assert.deepEqual(parseClusterProviderFlags({}), { clusterApi: undefined, namePrefixes: {} });
});

Deno.test("parseClusterProviderFlags reads repeatable, comma-separated namespaces, '*' meaning all of them", () => {
  assert.deepEqual(parseClusterProviderFlags({ "cluster-api": ["fleet-a,fleet-b", "fleet-a"] }).clusterApi, [
    "fleet-a",
    "fleet-b",
  ]);
  assert.deepEqual(parseClusterProviderFlags({ "cluster-api": ["fleet-a", "*"] }).clusterApi, ["*"]);
});

Deno.test("parseClusterProviderFlags reads PROVIDER=PREFIX entries, repeated or comma-separated", () => {
  assert.deepEqual(
    parseClusterProviderFlags({ "cluster-name-prefix": ["secret=sec#,cluster-api=capi#", "cluster-profile=inv#"] })
      .namePrefixes,
    { secret: "sec#", "cluster-api": "capi#", "cluster-profile": "inv#" },
  );
});

Deno.test("a bad --cluster-api or --cluster-name-prefix exits 2 with one line naming the value and the choices", () => {
  const cases: [string[], RegExp][] = [
    [
      ["--cluster-api", "Fleet"],
      /^invalid --cluster-api "Fleet": must be a namespace name \(a lowercase DNS label\) or '\*'$/,
    ],
    [["--cluster-api", ","], /^invalid --cluster-api: give a namespace name or '\*' for all namespaces$/],
    [
      ["--cluster-name-prefix", "capi=x#"],
      /^invalid --cluster-name-prefix "capi=x#": unknown provider "capi"; choose one of folder, secret, cluster-profile, cluster-api/,
    ],
    [["--cluster-name-prefix", "secret=A,B"], /^invalid --cluster-name-prefix "secret=A": a prefix starts with/],
    [["--cluster-name-prefix", "secret=a b"], /^invalid --cluster-name-prefix "secret=a b": a prefix starts with/],
  ];
  for (const [args, want] of cases) {
    assert.throws(() => parseFlags(["--clusters", "all", ...args]), (err: unknown) => {
      assert.ok(err instanceof FlagError, String(err));
      assert.match(err.message, want);
      assert.equal(err.message.includes("\n"), false);
      return true;
    });
  }
});

Deno.test("clusterProviderHelp documents both flags within the help's width", () => {
  const text = clusterProviderHelp();
  assert.match(text.join("\n"), /--cluster-api NS/);
  assert.match(text.join("\n"), /--cluster-name-prefix PROVIDER=PREFIX/);
  for (const line of text) assert.ok(line.length <= 110, line);
});

Deno.test("the flag's every-namespace word is the Cluster API provider's", () => {
  assert.equal(CLUSTER_API_ALL_NAMESPACES, PROVIDER_ALL);
});
