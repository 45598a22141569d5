// Unit tests for flag parsing.
import assert from "node:assert/strict";
import { FlagError, helpText, parseFlags, parseLiveness } from "./flags.ts";

Deno.test("parseFlags() splits comma lists and repeated flags", () => {
  const f = parseFlags(["--clusters", "prod,staging", "--clusters", "dev", "--namespace", "a", "-n", "b"]);
  assert.deepEqual(f.clusters, ["prod", "staging", "dev"]);
  assert.deepEqual(f.namespaces, ["a", "b"]);
  assert.equal(f.logLevel, "info");
  assert.equal(f.logFormat, "json");
  assert.equal(f.eventLevel, "Warning");
  assert.equal(f.http2, false, "HTTP/1.1 keep-alive is the default");
  assert.equal(parseFlags(["--clusters=a", "--http2"]).http2, true);
});

Deno.test("parseFlags() converts second-based limits to milliseconds", () => {
  const f = parseFlags(["--clusters=all", "--reconcile-timeout=2.5", "--concurrency=4"]);
  assert.equal(f.limits.reconcileTimeoutMs, 2500);
  assert.equal(f.limits.concurrency, 4);
});

Deno.test("parseFlags() rejects zero, negative and non-numeric limits with the flag's name", () => {
  assert.throws(() => parseFlags(["--clusters=a", "--qps", "-5"]), /invalid --qps "-5": must be a positive number/);
  for (const bad of ["0", "-1", "abc", "1.5"]) {
    assert.throws(
      () => parseFlags(["--clusters=a", `--concurrency=${bad}`]),
      (e: Error) => e instanceof FlagError && e.message.includes("--concurrency") && e.message.includes(bad),
    );
  }
});

Deno.test("parseFlags() rejects unknown flags and a missing --clusters", () => {
  assert.throws(
    () => parseFlags(["--clusters=a", "--bogus"]),
    (e: Error) => e instanceof FlagError && /bogus/.test(e.message),
  );
  assert.throws(() => parseFlags([]), (e: Error) => e instanceof FlagError && /--clusters is required/.test(e.message));
  assert.throws(() => parseFlags(["--clusters=a", "--log-level=loud"]), /debug, info, warn, error/);
});

Deno.test("parseLiveness() accepts Kopf's form and rejects other schemes and junk", () => {
  assert.deepEqual(parseLiveness("http://0.0.0.0:8080/healthz"), { hostname: "0.0.0.0", port: 8080, path: "/healthz" });
  assert.deepEqual(parseLiveness("http://[::1]:9000/healthz"), { hostname: "::1", port: 9000, path: "/healthz" });
  assert.throws(() => parseLiveness("https://0.0.0.0:8080/healthz"), FlagError);
  assert.throws(() => parseLiveness("not a url"), FlagError);
});

/** Whether parseFlags() knows `--flag` (any error but "unknown flag" means it parsed the name). */
function accepted(flag: string): boolean {
  try {
    parseFlags(["--clusters=a", flag]);
    return true;
  } catch (err) {
    return !/unknown flag/.test((err as Error).message);
  }
}

/**
 * The long flags parseFlags() hands to node:util parseArgs, read from the parser's own source: the keys of its
 * `options` table and of NUMBER_FLAGS (spread into it). Each is then confirmed by the parser itself.
 */
function parserFlags(): string[] {
  const source = Deno.readTextFileSync(new URL("./flags.ts", import.meta.url));
  const options = source.slice(source.indexOf("options: {", source.indexOf("parseArgs({")));
  const table = options.slice(0, options.indexOf("\n      },"));
  const numbers = source.slice(source.indexOf("const NUMBER_FLAGS"));
  const numberTable = numbers.slice(0, numbers.indexOf("\n};"));
  const keys = [
    ...[...table.matchAll(/^\s*"?([a-z][a-z0-9-]*)"?: \{ type:/gm)].map((m) => m[1]),
    ...[...numberTable.matchAll(/^\s*"([a-z][a-z0-9-]*)": \{ key:/gm)].map((m) => m[1]),
  ];
  assert.ok(table.includes("...numberOptions"), "the options table still spreads NUMBER_FLAGS");
  return keys.map((k) => `--${k}`);
}

Deno.test("helpText() documents every flag parseFlags() accepts, and only those", () => {
  const help = helpText();
  const documented = (flag: string) => new RegExp(`${flag}(?![a-z0-9-])`).test(help);
  const flags = parserFlags();
  assert.ok(flags.includes("--clusters") && flags.includes("--concurrency"), `flags read: ${flags.join(" ")}`);
  for (const flag of flags) {
    assert.ok(accepted(flag), `${flag} was read from the parser's table but parseFlags() rejects it`);
    assert.ok(documented(flag), `help lacks ${flag}`);
  }
  assert.ok(!accepted("--no-such-flag"), "the probe tells unknown flags apart");
  for (const [flag] of help.matchAll(/--[a-z][a-z0-9-]*/g)) {
    assert.ok(accepted(flag), `help documents ${flag}, which parseFlags() rejects`);
  }
});

Deno.test("parseFlags() leaves leader election off by default, with controller-runtime's timings", () => {
  const f = parseFlags(["--clusters=a"]);
  assert.deepEqual(f.leaderElection, {
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
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-lease-duration=10"]),
    (e: Error) =>
      e instanceof FlagError && /--leader-elect-lease-duration 10/.test(e.message) && /renew-deadline/.test(e.message),
  );
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-retry-period=9"]),
    (e: Error) =>
      e instanceof FlagError && /--leader-elect-renew-deadline 10/.test(e.message) && /retry-period/.test(e.message),
  );
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-retry-period=0"]), /positive number of seconds/);
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-id=Not_Valid"]), /DNS subdomain/);
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-namespace=a.b"]), /DNS label/);
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-cluster=z"]),
    (e: Error) => e instanceof FlagError && /"z"/.test(e.message) && /a/.test(e.message),
  );
});

Deno.test("helpText() documents every leader-election flag", () => {
  for (const f of ["id", "namespace", "cluster", "lease-duration", "renew-deadline", "retry-period"]) {
    assert.match(helpText(), new RegExp(`--leader-elect-${f} `));
  }
  assert.match(helpText(), /--leader-elect {2,}/);
});

Deno.test("parseFlags() reads the protected port's flags: HTTPS by default, plain HTTP on request, files in pairs", () => {
  assert.equal(parseFlags(["--clusters=a"]).metricsServing, undefined, "without the bind address: not served");
  assert.deepEqual(parseFlags(["--clusters=a", "--metrics-bind-address", ":8443"]).metricsServing, {
    hostname: "0.0.0.0",
    port: 8443,
    secure: true,
  });
  assert.deepEqual(
    parseFlags(["--clusters=a", "--metrics-bind-address=[::1]:0", "--metrics-secure=false"]).metricsServing,
    { hostname: "::1", port: 0, secure: false },
  );
  assert.equal(
    parseFlags(["--clusters=a", "--metrics-bind-address=127.0.0.1:9443", "--metrics-secure"]).metricsServing?.secure,
    true,
  );
  assert.deepEqual(
    parseFlags([
      "--clusters=a",
      "--metrics-bind-address=localhost:8443",
      "--tls-cert-file=/c/tls.crt",
      "--tls-private-key-file=/c/tls.key",
    ]).metricsServing,
    { hostname: "localhost", port: 8443, secure: true, tls: { certFile: "/c/tls.crt", keyFile: "/c/tls.key" } },
  );
});

Deno.test("parseFlags() rejects a bad bind address, a bad --metrics-secure and TLS flags that cannot apply", () => {
  const bad: [string[], RegExp][] = [
    [["--metrics-bind-address=8443"], /invalid --metrics-bind-address "8443": expected HOST:PORT/],
    [["--metrics-bind-address=:99999"], /invalid --metrics-bind-address ":99999"/],
    [
      ["--metrics-bind-address=:8443", "--metrics-secure=maybe"],
      /invalid --metrics-secure "maybe": choose true or false/,
    ],
    [["--metrics-secure=false"], /--metrics-secure needs --metrics-bind-address/],
    [["--tls-cert-file=/c"], /--tls-cert-file needs --metrics-bind-address/],
    [["--metrics-bind-address=:8443", "--tls-cert-file=/c"], /go together/],
    [
      ["--metrics-bind-address=:8443", "--metrics-secure=false", "--tls-cert-file=/c", "--tls-private-key-file=/k"],
      /needs --metrics-secure=true/,
    ],
  ];
  for (const [args, message] of bad) {
    assert.throws(
      () => parseFlags(["--clusters=a", ...args]),
      (e: Error) => e instanceof FlagError && message.test(e.message),
    );
  }
});

Deno.test("parseFlags() reads --operators: all built-ins by default, a list, or none", () => {
  assert.equal(parseFlags(["--clusters=a"]).operators, undefined);
  assert.deepEqual(parseFlags(["--clusters=a", "--operators", "uuid"]).operators, ["uuid"]);
  assert.deepEqual(parseFlags(["--clusters=a", "--operators=none"]).operators, []);
});

Deno.test("parseFlags() rejects an unknown --operators name, naming it and the valid choices", () => {
  for (const bad of [["--operators", "nope"], ["--operators", "uuid,nope"], ["--operators", ""]]) {
    assert.throws(() => parseFlags(["--clusters=a", ...bad]), (err: unknown) => {
      assert.ok(err instanceof FlagError);
      assert.match(
        err.message,
        /^invalid --operators "(nope)?": choose from uuid, mirror, comma-separated, or `none`$/,
      );
      return true;
    });
  }
});

Deno.test("parseFlags() reads --cluster-dir and --cluster-secrets, and rejects a namespace that is not a DNS label", () => {
  const f = parseFlags(["--clusters", "all", "--cluster-dir", "/app/clusters", "--cluster-secrets", "operator-hub"]);
  assert.equal(f.clusterDir, "/app/clusters");
  assert.equal(f.clusterSecrets, "operator-hub");
  const d = parseFlags(["--clusters", "all"]);
  assert.equal(d.clusterDir, undefined, "the default folder is chosen by main (./clusters unless --kubeconfig)");
  assert.equal(d.clusterSecrets, undefined);
  assert.throws(
    () => parseFlags(["--clusters", "all", "--cluster-secrets", "Operator_Hub"]),
    (e: unknown) => e instanceof FlagError && /invalid --cluster-secrets "Operator_Hub"/.test(e.message),
  );
  assert.throws(() => parseFlags(["--clusters", "all", "--cluster-dir", ""]), FlagError);
  assert.match(helpText(), /--cluster-dir DIR/);
  assert.match(helpText(), /--cluster-secrets NS/);
});

Deno.test("parseFlags() accepts Kopf's --standalone, -A/--all-namespaces and --verbose/--debug/--quiet", () => {
  const f = parseFlags(["--clusters=a", "--standalone", "-A", "--quiet"]);
  assert.equal(f.standalone, true);
  assert.deepEqual(f.namespaces, [], "all namespaces");
  assert.equal(f.logLevel, "warn");
  assert.equal(parseFlags(["--clusters=a", "--verbose"]).logLevel, "debug");
  assert.equal(parseFlags(["--clusters=a", "--debug"]).logLevel, "debug");
  assert.equal(parseFlags(["--clusters=a", "--all-namespaces"]).standalone, false);
  assert.throws(() => parseFlags(["--clusters=a", "-A", "-n", "x"]), /--all-namespaces contradicts --namespace x/);
  assert.throws(() => parseFlags(["--clusters=a", "--quiet", "--log-level=debug"]), /conflicting log levels/);
});

Deno.test("parseFlags() answers a misspelled flag with a did-you-mean naming the right one", () => {
  assert.throws(() => parseFlags(["--cluster", "prod"]), /unknown flag --cluster: did you mean --clusters\?/);
  assert.throws(() => parseFlags(["--clusters=a", "--livenes=x"]), /did you mean --liveness\?/);
  assert.throws(() => parseFlags(["--clusters=a", "--kubeconfg", "f"]), /did you mean --kubeconfig\?/);
  assert.throws(
    () => parseFlags(["--clusters=a", "--zzzzzzzzzz"]),
    (e: Error) =>
      e instanceof FlagError && /unknown flag --zzzzzzzzzz/.test(e.message) && !/did you mean/.test(e.message),
  );
});

Deno.test("parseFlags() takes positional arguments as operator files, in order", () => {
  assert.deepEqual(parseFlags(["--clusters=a", "a.ts", "--http2", "b.ts"]).files, ["a.ts", "b.ts"]);
  assert.deepEqual(parseFlags(["--clusters=a"]).files, []);
});

Deno.test("parseFlags() reads --mirror-orphan-on-unreachable-after in seconds (default 10 minutes) and rejects a non-positive value", () => {
  assert.equal(parseFlags(["--clusters=a"]).mirrorOrphanOnUnreachableAfterMs, 600_000);
  assert.equal(
    parseFlags(["--clusters=a", "--mirror-orphan-on-unreachable-after", "2.5"]).mirrorOrphanOnUnreachableAfterMs,
    2500,
  );
  for (const bad of ["0", "soon", ""]) {
    assert.throws(
      () => parseFlags(["--clusters=a", "--mirror-orphan-on-unreachable-after", bad]),
      (err: unknown) =>
        err instanceof FlagError &&
        /invalid --mirror-orphan-on-unreachable-after .*positive number of seconds/.test(err.message),
    );
  }
});
