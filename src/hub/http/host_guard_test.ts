// Unit tests of the loopback Host guard (pure; the ports are tested over real HTTP in gated_server_test.ts and
// tests/production/port_hardening_test.ts).
import assert from "node:assert/strict";
import { foreignHostRefusal, isLoopbackBind } from "./host_guard.ts";

Deno.test("isLoopbackBind() is true for 127.0.0.0/8, ::1 and localhost, and false for 0.0.0.0, :: and real addresses", () => {
  for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"]) {
    assert.equal(isLoopbackBind(h), true, h);
  }
  for (const h of ["0.0.0.0", "::", "10.0.0.5", "hub.example", "128.0.0.1", "127.0.0.256"]) {
    assert.equal(isLoopbackBind(h), false, h);
  }
});

Deno.test("foreignHostRefusal() lets loopback Host headers through, with or without a port, and names a foreign one", () => {
  for (
    const host of [
      null,
      "127.0.0.1",
      "127.0.0.1:8080",
      "localhost:8080",
      "LocalHost",
      "[::1]:8443",
      "[::1]",
      "localhost.",
    ]
  ) {
    assert.equal(foreignHostRefusal(host), undefined, String(host));
  }
  for (
    const host of [
      "evil.example",
      "evil.example:8080",
      "127.0.0.1.evil.example",
      "localhost.evil.example",
      "10.0.0.1",
      "",
      "[::1",
      "a b",
    ]
  ) {
    const refusal = foreignHostRefusal(host);
    assert.ok(refusal, `Host ${JSON.stringify(host)} was let through`);
    assert.match(refusal, /bound to loopback/);
    assert.ok(refusal.includes(JSON.stringify(host)), "the refusal names the Host seen");
  }
});

Deno.test("foreignHostRefusal() cuts a long foreign Host to 100 characters in its message", () => {
  const refusal = foreignHostRefusal(`${"a".repeat(300)}.example`)!;
  assert.ok(refusal.length < 300, refusal);
  assert.match(refusal, /a{100}…/);
});
