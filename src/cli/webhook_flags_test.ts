// Unit tests for the admission port's flags: defaults, each check's one line, and their place in --help.
import assert from "node:assert/strict";
import { FlagError, helpText, parseFlags } from "./flags.ts";

const parse = (...args: string[]) => parseFlags(["--clusters", "prod", ...args]).webhook;

Deno.test("admission is off without --webhook-bind-address, and on with the documented defaults", () => {
  assert.equal(parse(), undefined);
  assert.deepEqual(parse("--webhook-bind-address", ":9443"), {
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
    ),
    {
      hostname: "127.0.0.1",
      port: 0,
      url: "https://hub.example.com:9443/base",
      service: { namespace: "hub-system", name: "webhooks", port: 8443 },
      name: "blue",
      certLifetimeMs: 6000,
    },
  );
  assert.equal(parse("--webhook-bind-address=:1", "--webhook-cert-dir=/certs")?.certDir, "/certs");
});

Deno.test("a bad --webhook-* flag exits with one line naming it", () => {
  const bad = (re: RegExp, ...args: string[]) =>
    assert.throws(() => parse(...args), (e: unknown) => e instanceof FlagError && re.test(e.message));
  bad(/--webhook-url needs --webhook-bind-address/, "--webhook-url=https://x");
  bad(/invalid --webhook-bind-address "nope"/, "--webhook-bind-address=nope");
  bad(/invalid --webhook-url "http:\/\/x"/, "--webhook-bind-address=:1", "--webhook-url=http://x");
  bad(/invalid --webhook-service "x"/, "--webhook-bind-address=:1", "--webhook-service=x");
  bad(/invalid --webhook-name "Blue!"/, "--webhook-bind-address=:1", "--webhook-name=Blue!");
  bad(/invalid --webhook-cert-lifetime "1"/, "--webhook-bind-address=:1", "--webhook-cert-lifetime=1");
  bad(/not with --webhook-cert-dir/, "--webhook-bind-address=:1", "--webhook-cert-dir=/c", "--webhook-cert-lifetime=9");
});

Deno.test("--help documents every --webhook-* flag", () => {
  const help = helpText();
  for (const f of ["bind-address", "cert-dir", "url", "service", "name", "cert-lifetime"]) {
    assert.ok(help.includes(`--webhook-${f}`), f);
  }
});
