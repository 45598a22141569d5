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
});

Deno.test("parseFlags() converts second-based limits to milliseconds", () => {
  const f = parseFlags(["--clusters=all", "--reconcile-timeout=2.5", "--concurrency=4"]);
  assert.equal(f.limits.reconcileTimeoutMs, 2500);
  assert.equal(f.limits.concurrency, 4);
});

Deno.test("parseFlags() rejects zero, negative and non-numeric limits with the flag's name", () => {
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

Deno.test("helpText() documents every flag parseFlags() accepts", () => {
  const help = helpText();
  for (
    const flag of [
      "--clusters",
      "--kubeconfig",
      "--namespace",
      "--liveness",
      "--log-level",
      "--log-format",
      "--concurrency",
      "--qps",
      "--cluster-qps",
      "--watch-idle-timeout",
    ]
  ) {
    assert.ok(help.includes(flag), `help lacks ${flag}`);
  }
});
