// Each row of the flag table read through parseFlags(): its default, the values it accepts, and the one line it
// answers a bad value with (the checks across flags: parse_flags_test.ts).

import assert from "node:assert/strict";
import { CLUSTER_API_ALL_NAMESPACES } from "../../hub/providers/sources/cluster_api_provider.ts";
import { ALL_PROFILE_NAMESPACES } from "../../hub/providers/sources/cluster_profile_provider.ts";
import { FLAGS } from "./flag_table.ts";
import { ALL_NAMESPACES, FlagError } from "./flag_values.ts";
import { parseFlags } from "./parse_flags.ts";

const parse = (...args: string[]) => parseFlags(["--clusters=a", ...args]);

/** The one-line FlagError message parseFlags() refuses `args` with (after --clusters=a). */
function refusal(args: string[]): string {
  try {
    parse(...args);
  } catch (err) {
    if (err instanceof FlagError && !err.message.includes("\n")) return err.message;
    throw err;
  }
  throw new Error(`${args.join(" ")} was accepted`);
}

const refused = (args: string[], want: RegExp | string) =>
  typeof want === "string" ? assert.equal(refusal(args), want) : assert.match(refusal(args), want);

Deno.test("every row has a help text, and a placeholder exactly when it takes a value; sections stay together", () => {
  const headings = Object.values(FLAGS).map((f) => f.section).filter((h, i, all) => h !== all[i - 1]);
  assert.equal(new Set(headings).size, headings.length, `a section split in two: ${headings.join(" | ")}`);
  for (const [name, f] of Object.entries(FLAGS)) {
    assert.ok(f.help.length > 0, name);
    assert.equal(f.arg !== undefined, f.kind !== "boolean", `${name}: --help shows a value's placeholder`);
    assert.ok(!/\(default/.test(f.help), `${name}: the default belongs in default/defaultText, not the help text`);
    if (f.needs) assert.ok(f.needs.flag in FLAGS, `${name} needs --${f.needs.flag}, which is not a flag`);
  }
});

Deno.test("the flags' every-namespace word is the Cluster API and ClusterProfile providers'", () => {
  assert.equal(ALL_NAMESPACES, CLUSTER_API_ALL_NAMESPACES);
  assert.equal(ALL_NAMESPACES, ALL_PROFILE_NAMESPACES);
});

Deno.test("parseFlags() splits comma lists and repeated flags, and applies the documented defaults", () => {
  const f = parseFlags(["--clusters", "prod,staging", "--clusters", "dev", "--namespace", "a", "-n", "b"]);
  assert.deepEqual(f.clusters, ["prod", "staging", "dev"]);
  assert.deepEqual(f.namespaces, ["a", "b"]);
  assert.equal(f.logLevel, "info");
  assert.equal(f.logFormat, "json");
  assert.equal(f.eventLevel, "Warning");
  assert.equal(f.http2, false, "HTTP/1.1 keep-alive is the default");
  assert.equal(parse("--http2").http2, true);
  assert.equal(f.checkReads, false, "the read check is for development");
  assert.equal(parse("--check-reads").checkReads, true);
  assert.equal(parse("--event-level=normal").eventLevel, "Normal", "case-insensitive, spelled as documented");
});

Deno.test("parseFlags() refuses a bad --log-level, --log-format or --event-level, naming the choices", () => {
  refused(["--log-level=loud"], 'invalid --log-level "loud": choose one of debug, info, warn, error');
  refused(["--log-format=xml"], 'invalid --log-format "xml": choose json or text');
  refused(["--event-level=Info"], 'invalid --event-level "Info": choose Normal or Warning');
});

Deno.test("parseFlags() reads --operators: all built-ins by default, a list, or none", () => {
  assert.equal(parse().operators, undefined);
  assert.deepEqual(parse("--operators", "uuid").operators, ["uuid"]);
  assert.deepEqual(parse("--operators=none").operators, []);
});

Deno.test("parseFlags() rejects an unknown --operators name, naming it and the valid choices", () => {
  for (const bad of [["--operators", "nope"], ["--operators", "uuid,nope"], ["--operators", ""]]) {
    refused(bad, /^invalid --operators "(nope)?": choose from uuid, mirror, comma-separated, or `none`$/);
  }
});

Deno.test("parseFlags() reads --cluster-dir and --cluster-secrets, and rejects a namespace that is not a DNS label", () => {
  const f = parseFlags(["--clusters", "all", "--cluster-dir", "/app/clusters", "--cluster-secrets", "operator-hub"]);
  assert.equal(f.clusterDir, "/app/clusters");
  assert.equal(f.clusterSecrets, "operator-hub");
  const d = parse();
  assert.equal(d.clusterDir, undefined, "the default folder is chosen by main (./clusters unless --kubeconfig)");
  assert.equal(d.clusterSecrets, undefined);
  refused(["--cluster-secrets", "Operator_Hub"], /^invalid --cluster-secrets "Operator_Hub"/);
  refused(["--cluster-dir", ""], 'invalid --cluster-dir "": name a folder of kubeconfig files, e.g. ./clusters');
});

Deno.test("parseFlags() reads --mirror-orphan-on-unreachable-after in seconds (default 10 minutes) and rejects a non-positive value", () => {
  assert.equal(parse().mirrorOrphanOnUnreachableAfterMs, 600_000);
  assert.equal(parse("--mirror-orphan-on-unreachable-after", "2.5").mirrorOrphanOnUnreachableAfterMs, 2500);
  for (const bad of ["0", "soon", ""]) {
    refused(
      ["--mirror-orphan-on-unreachable-after", bad],
      `invalid --mirror-orphan-on-unreachable-after "${bad}": must be a positive number of seconds`,
    );
  }
});

Deno.test("--mirror-namespaces is unset without the flag and joins repeated, comma-separated names once", () => {
  assert.equal(parse().mirrorNamespaces, undefined);
  assert.deepEqual(parse("--mirror-namespaces", "apps,shared", "--mirror-namespaces", "apps").mirrorNamespaces, [
    "apps",
    "shared",
  ]);
});

Deno.test("--mirror-namespaces refuses a name that is not a namespace name, and an empty list, naming the flag", () => {
  refused(["--mirror-namespaces", "apps,Kube_System"], /--mirror-namespaces "Kube_System"/);
  refused(["--mirror-namespaces", ","], /--mirror-namespaces: give at least one/);
});

Deno.test("parseFlags() converts second-based limits to milliseconds and leaves the ones not given to the hub", () => {
  const f = parseFlags(["--clusters=all", "--reconcile-timeout=2.5", "--concurrency=4"]);
  assert.deepEqual(f.limits, { reconcileTimeoutMs: 2500, concurrency: 4 });
});

Deno.test("parseFlags() rejects zero, negative and non-numeric limits with the flag's name", () => {
  refused(["--qps", "-5"], 'invalid --qps "-5": must be a positive number');
  for (const bad of ["0", "-1", "abc", "1.5"]) {
    refused([`--concurrency=${bad}`], `invalid --concurrency "${bad}": must be a positive whole number`);
  }
});

Deno.test("parseFlags() reads --max-object-bytes as bytes or with a Ki, Mi or Gi suffix", () => {
  assert.equal(parse("--max-object-bytes=1048576").limits.maxObjectBytes, 1048576);
  assert.equal(parse("--max-object-bytes", "512Ki").limits.maxObjectBytes, 512 * 1024);
  assert.equal(parse("--max-object-bytes=8Mi").limits.maxObjectBytes, 8 * 1024 * 1024);
  assert.equal(parse("--max-object-bytes=1Gi").limits.maxObjectBytes, 1024 ** 3);
  assert.equal(parse().limits.maxObjectBytes, undefined, "the hub's default applies");
});

Deno.test("parseFlags() rejects a --max-object-bytes that is not a positive whole size with one line naming the flag and the forms", () => {
  for (const bad of ["0", "-5", "4MB", "1.5Mi", "Mi", "4 Mi Mi", "", "4mi"]) {
    refused(
      ["--max-object-bytes", bad],
      `invalid --max-object-bytes "${bad}": must be a positive whole number of bytes, optionally with Ki, Mi or Gi ` +
        "(e.g. 4Mi)",
    );
  }
});

Deno.test("--liveness takes Kopf's form and refuses other schemes, credentials and junk", () => {
  assert.equal(parse().liveness, undefined, "not served without it");
  const served = (url: string) => Object.values(parse("--liveness", url).liveness ?? {});
  assert.deepEqual(served("http://0.0.0.0:8080/healthz"), ["0.0.0.0", 8080, "/healthz"]);
  assert.deepEqual(served("http://[::1]:9000/healthz"), ["::1", 9000, "/healthz"]);
  refused(["--liveness=https://0.0.0.0:8080/healthz"], /only http:\/\/ is served/);
  refused(["--liveness=not a url"], /expected a URL like http:\/\/0.0.0.0:8080\/healthz/);
  refused(["--liveness=http://u:p@h:1/healthz"], /no credentials, query or fragment allowed/);
});

Deno.test("--readiness-clusters is command-line by default and accepts command-line or all", () => {
  assert.equal(parse().readinessClusters, "command-line");
  assert.equal(parse("--readiness-clusters", "command-line").readinessClusters, "command-line");
  assert.equal(parse("--readiness-clusters", "all").readinessClusters, "all");
});

Deno.test("--readiness-clusters refuses anything else with one line naming the value and the choices", () => {
  for (const bad of ["", "ALL", "every", "all,command-line"]) {
    refused(
      [`--readiness-clusters=${bad}`],
      `invalid --readiness-clusters ${JSON.stringify(bad)}: choose command-line (the default) or all`,
    );
  }
});

Deno.test("the credential flags default to no exec plugin and https only, and read a repeatable allowlist", () => {
  assert.deepEqual(parse().credentialPolicy, { execAllowlist: [], allowHttpServers: false });
  assert.deepEqual(
    parse(
      "--exec-plugin-allowlist",
      "aws, /opt/bin/kubelogin",
      "--exec-plugin-allowlist=gke-gcloud-auth-plugin",
      "--allow-http-servers",
    ).credentialPolicy,
    { execAllowlist: ["aws", "/opt/bin/kubelogin", "gke-gcloud-auth-plugin"], allowHttpServers: true },
  );
});

Deno.test("--exec-plugin-allowlist refuses a relative path, naming the flag and the entry", () => {
  refused(
    ["--exec-plugin-allowlist", "aws,bin/kubelogin"],
    /^invalid --exec-plugin-allowlist: "bin\/kubelogin" is a relative path/,
  );
});

Deno.test("--cluster-api and --cluster-name-prefix default to no Cluster API provider and no prefixes", () => {
  assert.deepEqual(parse().clusterProviders, { clusterApi: undefined, namePrefixes: {} });
});

Deno.test("--cluster-api reads repeatable, comma-separated namespaces, '*' meaning all of them", () => {
  assert.deepEqual(parse("--cluster-api", "fleet-a,fleet-b", "--cluster-api", "fleet-a").clusterProviders.clusterApi, [
    "fleet-a",
    "fleet-b",
  ]);
  assert.deepEqual(parse("--cluster-api", "fleet-a", "--cluster-api", "*").clusterProviders.clusterApi, ["*"]);
});

Deno.test("--cluster-name-prefix reads PROVIDER=PREFIX entries, repeated or comma-separated", () => {
  assert.deepEqual(
    parse("--cluster-name-prefix", "secret=sec#,cluster-api=capi#", "--cluster-name-prefix=cluster-profile=inv#")
      .clusterProviders.namePrefixes,
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
  for (const [args, want] of cases) refused(args, want);
});

Deno.test("--cluster-profiles reads namespaces (repeatable, comma list, '*' for all) and refuses a bad one", () => {
  assert.equal(parse().clusterProfiles, undefined);
  const file = ["--clusterprofile-provider-file", "p.json"];
  assert.deepEqual(parse("--cluster-profiles", "a,b", "--cluster-profiles", "a", ...file).clusterProfiles, {
    namespaces: ["a", "b"],
    providerFile: "p.json",
  });
  assert.deepEqual(parse("--cluster-profiles=a,*", ...file).clusterProfiles?.namespaces, ["*"]);
  refused(["--cluster-profiles", "Bad_NS", ...file], /^invalid --cluster-profiles "Bad_NS"/);
  refused(["--cluster-profiles", "", ...file], "invalid --cluster-profiles: give a namespace name or '*' for all");
});

Deno.test("--leader-elect-id and --leader-elect-namespace must be names Kubernetes accepts for a Lease", () => {
  refused(["--leader-elect-id=Not_Valid"], /DNS subdomain/);
  refused(["--leader-elect-namespace=a.b"], /DNS label/);
  refused(["--leader-elect-retry-period=0"], /positive number of seconds/);
});

Deno.test("the --webhook-* values are checked one by one, each refusal one line naming the flag", () => {
  const on = "--webhook-bind-address=:1";
  refused(["--webhook-bind-address=nope"], /^invalid --webhook-bind-address "nope": expected HOST:PORT, e.g. :9443/);
  refused([on, "--webhook-url=http://x"], /^invalid --webhook-url "http:\/\/x"/);
  refused([on, "--webhook-service=x"], /^invalid --webhook-service "x"/);
  refused([on, "--webhook-name=Blue!"], /^invalid --webhook-name "Blue!"/);
  refused([on, "--webhook-cert-lifetime=1"], /^invalid --webhook-cert-lifetime "1"/);
  refused([on, "--webhook-cert-dir="], /^invalid --webhook-cert-dir ""/);
});

Deno.test("the protected port's bind address and --metrics-secure are checked one by one", () => {
  refused(["--metrics-bind-address=8443"], /^invalid --metrics-bind-address "8443": expected HOST:PORT, e.g. :8443/);
  refused(["--metrics-bind-address=:99999"], /^invalid --metrics-bind-address ":99999"/);
  refused(
    ["--metrics-bind-address=:8443", "--metrics-secure=maybe"],
    'invalid --metrics-secure "maybe": choose true or false',
  );
});

Deno.test("the shard values are checked one by one, each refusal one line naming the flag and the value", () => {
  refused(["--shard", "--shard-weight", "0"], /^invalid --shard-weight "0": must be a number above 0/);
  refused(["--shard", "--shard-weight", "x"], /^invalid --shard-weight "x"/);
  refused(["--shard", "--shard-id", "Bad_Id"], /^invalid --shard-id "Bad_Id"/);
  refused(
    ["--shard", "--shard-lease-duration", "12.5"],
    "invalid --shard-lease-duration 12.5: a Lease holds whole seconds",
  );
});
