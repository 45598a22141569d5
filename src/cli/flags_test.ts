// Unit tests for flag parsing: the options table, the checks across groups, --help and the did-you-mean.
import assert from "node:assert/strict";
import { FlagError, helpText, HUB_OPTIONS, parseFlags } from "./flags.ts";

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

Deno.test("parseFlags() rejects unknown flags and a missing --clusters", () => {
  assert.throws(
    () => parseFlags(["--clusters=a", "--bogus"]),
    (e: Error) => e instanceof FlagError && /bogus/.test(e.message),
  );
  assert.throws(() => parseFlags([]), (e: Error) => e instanceof FlagError && /--clusters is required/.test(e.message));
  assert.throws(() => parseFlags(["--clusters=a", "--log-level=loud"]), /debug, info, warn, error/);
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

/** The long flags of parseFlags()'s options table; each is then confirmed by the parser itself. */
function parserFlags(): string[] {
  return Object.keys(HUB_OPTIONS).map((k) => `--${k}`);
}

Deno.test("helpText() documents every flag parseFlags() accepts, and only those", () => {
  const help = helpText();
  const documented = (flag: string) => new RegExp(`${flag}(?![a-z0-9-])`).test(help);
  const flags = parserFlags();
  for (const f of ["--clusters", "--concurrency", "--leader-elect-id", "--shard-warm", "--tls-cert-file"]) {
    assert.ok(flags.includes(f), `${f} in the options table: ${flags.join(" ")}`);
  }
  for (const flag of flags) {
    assert.ok(accepted(flag), `${flag} was read from the parser's table but parseFlags() rejects it`);
    assert.ok(documented(flag), `help lacks ${flag}`);
  }
  assert.ok(!accepted("--no-such-flag"), "the probe tells unknown flags apart");
  for (const [flag] of help.matchAll(/--[a-z][a-z0-9-]*/g)) {
    assert.ok(accepted(flag), `help documents ${flag}, which parseFlags() rejects`);
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
