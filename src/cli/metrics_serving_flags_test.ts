// The protected port's flags, read through parseFlags().
import assert from "node:assert/strict";
import { FlagError, parseFlags } from "./flags.ts";

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
