// parseFlags(): the tokenizer's errors and did-you-mean, the checks across flags, and each group of HubFlags (the
// checks of one flag's value: flag_table_test.ts).

import assert from "node:assert/strict";
import { FLAGS } from "./flag_table.ts";
import { FlagError } from "./flag_values.ts";
import { PARSE_ARGS_OPTIONS, parseFlags } from "./parse_flags.ts";

const parse = (...args: string[]) => parseFlags(["--clusters=a", ...args]);

/** Asserts `args` (after --clusters=a) fail with one FlagError line matching `want`. */
function refused(args: string[], want: RegExp | string, clusters = ["--clusters=a"]): void {
  assert.throws(() => parseFlags([...clusters, ...args]), (err: unknown) => {
    assert.ok(err instanceof FlagError, `${args.join(" ")}: ${err}`);
    if (typeof want === "string") assert.equal(err.message, want);
    else assert.match(err.message, want);
    assert.ok(!err.message.includes("\n"), err.message);
    return true;
  });
}

Deno.test("parseFlags() accepts exactly the table's flags, each under its name and one-letter alias", () => {
  assert.deepEqual(Object.keys(PARSE_ARGS_OPTIONS), Object.keys(FLAGS));
  assert.deepEqual(PARSE_ARGS_OPTIONS.namespace, { type: "string", multiple: true, short: "n" });
  assert.deepEqual(PARSE_ARGS_OPTIONS["all-namespaces"], { type: "boolean", short: "A" });
  assert.deepEqual(PARSE_ARGS_OPTIONS.liveness, { type: "string" });
  assert.equal(parse("-A", "-h").help, true);
});

Deno.test("parseFlags() rejects unknown flags and a missing --clusters", () => {
  refused(["--bogus"], "unknown flag --bogus (see --help)");
  refused([], "--clusters is required: name kubeconfig contexts, `all` or `in-cluster` (see --help)", []);
  assert.equal(parseFlags(["--help"]).help, true, "--help needs no --clusters");
  assert.equal(parseFlags(["--version"]).version, true, "nor does --version");
  refused(["--clusters"], /^Option '--clusters <value>' argument missing \(see --help\)$/, []);
});

Deno.test("parseFlags() answers a misspelled flag with a did-you-mean naming the right one", () => {
  refused(["--cluster", "prod"], "unknown flag --cluster: did you mean --clusters? (see --help)", []);
  refused(["--livenes=x"], /did you mean --liveness\?/);
  refused(["--kubeconfg", "f"], /did you mean --kubeconfig\?/);
  refused(["--zzzzzzzzzz"], "unknown flag --zzzzzzzzzz (see --help)");
});

Deno.test("parseFlags() takes positional arguments as operator files, in order", () => {
  assert.deepEqual(parse("a.ts", "--http2", "b.ts").files, ["a.ts", "b.ts"]);
  assert.deepEqual(parse().files, []);
});

Deno.test("parseFlags() accepts Kopf's --standalone, -A/--all-namespaces and --verbose/--debug/--quiet", () => {
  const f = parse("--standalone", "-A", "--quiet");
  assert.equal(f.standalone, true);
  assert.deepEqual(f.namespaces, [], "all namespaces");
  assert.equal(f.logLevel, "warn");
  assert.equal(parse("--verbose").logLevel, "debug");
  assert.equal(parse("--debug").logLevel, "debug");
  assert.equal(parse("--all-namespaces").standalone, false);
  refused(["-A", "-n", "x"], "--all-namespaces contradicts --namespace x: give one");
  refused(["--quiet", "--log-level=debug"], "conflicting log levels: --quiet, --log-level: give one");
  refused(["--verbose", "--debug"], "conflicting log levels: --verbose, --debug: give one");
});

Deno.test("--home-cluster and --leader-elect-cluster must be one of the --clusters, unless --clusters all", () => {
  refused(["--home-cluster=z"], 'invalid --home-cluster "z": it must be one of the --clusters (a)');
  refused(["--leader-elect-cluster=z"], 'invalid --leader-elect-cluster "z": it must be one of the --clusters (a)');
  assert.equal(parseFlags(["--clusters=all", "--home-cluster=z"]).homeCluster, "z");
});

Deno.test("parseFlags() leaves leader election off by default, with controller-runtime's timings", () => {
  assert.deepEqual(parse().leaderElection, {
    enabled: false,
    id: "operator-hub.demo.operator",
    namespace: undefined,
    cluster: undefined,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
});

Deno.test("parseFlags() reads every --leader-elect flag", () => {
  const f = parseFlags([
    "--clusters=a,b",
    "--leader-elect",
    "--leader-elect-id=my-hub",
    "--leader-elect-namespace=ops",
    "--leader-elect-cluster=b",
    "--leader-elect-lease-duration=30",
    "--leader-elect-renew-deadline=20",
    "--leader-elect-retry-period=4",
  ]);
  assert.deepEqual(f.leaderElection, {
    enabled: true,
    id: "my-hub",
    namespace: "ops",
    cluster: "b",
    leaseDurationMs: 30_000,
    renewDeadlineMs: 20_000,
    retryPeriodMs: 4_000,
  });
});

Deno.test("parseFlags() rejects leader-election timings client-go would reject, naming both flags", () => {
  refused(
    ["--leader-elect-lease-duration=10"],
    "invalid --leader-elect-lease-duration 10: it must be greater than --leader-elect-renew-deadline (10)",
  );
  refused(
    ["--leader-elect-retry-period=9"],
    "invalid --leader-elect-renew-deadline 10: it must be greater than 1.2 × --leader-elect-retry-period (10.8)",
  );
});

Deno.test("parseFlags() leaves sharding off by default, with the peer Lease timed like leader election", () => {
  assert.deepEqual(parse().shard, {
    enabled: false,
    id: "operator-hub",
    warm: false,
    weight: 1,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    renewPeriodMs: 2_000,
  });
});

Deno.test("parseFlags() reads --shard, --shard-warm, --shard-weight and the timing flags", () => {
  const f = parse(
    "--shard",
    "--shard-warm",
    "--shard-weight",
    "2.5",
    "--shard-id",
    "team-a",
    "--shard-lease-duration",
    "12",
    "--shard-renew-deadline",
    "8",
    "--shard-renew-period",
    "1",
  ).shard;
  assert.deepEqual(f, {
    enabled: true,
    warm: true,
    weight: 2.5,
    id: "team-a",
    leaseDurationMs: 12_000,
    renewDeadlineMs: 8_000,
    renewPeriodMs: 1_000,
  });
});

Deno.test("parseFlags() rejects shard timings that contradict each other, a shard flag without --shard, and --shard with --leader-elect", () => {
  refused(
    ["--shard", "--shard-lease-duration", "10"],
    "invalid --shard-lease-duration 10: it must be greater than --shard-renew-deadline (10)",
  );
  refused(
    ["--shard", "--shard-renew-period", "6"],
    "invalid --shard-renew-deadline 10: it must be greater than 2 × --shard-renew-period (12)",
  );
  refused(["--shard-warm"], "--shard-warm needs --shard");
  refused(
    ["--shard", "--leader-elect"],
    "--shard and --leader-elect exclude each other: sharding already gives each cluster one owner",
  );
});

Deno.test("parseFlags() reads the protected port's flags: HTTPS by default, plain HTTP on request, files in pairs", () => {
  assert.equal(parse().metricsServing, undefined, "without the bind address: not served");
  assert.deepEqual(parse("--metrics-bind-address", ":8443").metricsServing, {
    hostname: "0.0.0.0",
    port: 8443,
    secure: true,
  });
  assert.deepEqual(parse("--metrics-bind-address=[::1]:0", "--metrics-secure=false").metricsServing, {
    hostname: "::1",
    port: 0,
    secure: false,
  });
  assert.equal(parse("--metrics-bind-address=127.0.0.1:9443", "--metrics-secure").metricsServing?.secure, true);
  assert.equal(
    parse("--metrics-secure", "--metrics-bind-address=127.0.0.1:9443").metricsServing?.secure,
    true,
    "a bare --metrics-secure does not take the next flag as its value",
  );
  assert.deepEqual(
    parse("--metrics-bind-address=localhost:8443", "--tls-cert-file=/c/tls.crt", "--tls-private-key-file=/c/tls.key")
      .metricsServing,
    { hostname: "localhost", port: 8443, secure: true, tls: { certFile: "/c/tls.crt", keyFile: "/c/tls.key" } },
  );
});

Deno.test("parseFlags() rejects protected-port flags without the port, and TLS files that cannot apply", () => {
  refused(["--metrics-secure=false"], "--metrics-secure needs --metrics-bind-address HOST:PORT (e.g. :8443)");
  refused(["--tls-cert-file=/c"], "--tls-cert-file needs --metrics-bind-address HOST:PORT (e.g. :8443)");
  refused(["--metrics-bind-address=:8443", "--tls-cert-file=/c"], /go together/);
  refused(
    ["--metrics-bind-address=:8443", "--metrics-secure=false", "--tls-cert-file=/c", "--tls-private-key-file=/k"],
    "--tls-cert-file needs --metrics-secure=true: plain HTTP serves no certificate",
  );
});

Deno.test("admission is off without --webhook-bind-address, and on with the documented defaults", () => {
  assert.equal(parse().webhook, undefined);
  assert.deepEqual(parse("--webhook-bind-address", ":9443").webhook, {
    hostname: "0.0.0.0",
    port: 9443,
    name: "default",
    certLifetimeMs: 30 * 24 * 3600_000,
  });
});

Deno.test("the --webhook-* flags are parsed: cert dir, url, service, name, lifetime", () => {
  assert.deepEqual(
    parse(
      "--webhook-bind-address=127.0.0.1:0",
      "--webhook-url=https://hub.example.com:9443/base",
      "--webhook-service=hub-system/webhooks:8443",
      "--webhook-name=blue",
      "--webhook-cert-lifetime=6",
    ).webhook,
    {
      hostname: "127.0.0.1",
      port: 0,
      url: "https://hub.example.com:9443/base",
      service: { namespace: "hub-system", name: "webhooks", port: 8443 },
      name: "blue",
      certLifetimeMs: 6000,
    },
  );
  assert.equal(parse("--webhook-bind-address=:1", "--webhook-cert-dir=/certs").webhook?.certDir, "/certs");
});

Deno.test("a --webhook-* flag without the port, or a lifetime beside a cert dir, exits with one line naming it", () => {
  refused(["--webhook-url=https://x"], "--webhook-url needs --webhook-bind-address HOST:PORT (e.g. :9443)");
  refused(
    ["--webhook-bind-address=:1", "--webhook-cert-dir=/c", "--webhook-cert-lifetime=9"],
    "--webhook-cert-lifetime applies to the hub's own certificate: not with --webhook-cert-dir",
  );
});

Deno.test("--cluster-profiles and --clusterprofile-provider-file need each other", () => {
  refused(
    ["--cluster-profiles", "a"],
    "--cluster-profiles needs --clusterprofile-provider-file FILE: the exec plugin for each access provider",
  );
  refused(["--clusterprofile-provider-file", "p"], "--clusterprofile-provider-file needs --cluster-profiles NAMESPACE");
});
