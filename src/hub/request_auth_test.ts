// Unit tests of the Authorization header parsing of the protected port (the reviews run against real apiservers in
// tests/production/protected_port_test.ts).
import assert from "node:assert/strict";
import { bearerToken } from "./request_auth.ts";

Deno.test("bearerToken() takes the token of a Bearer header, in any case, and nothing else", () => {
  assert.equal(bearerToken("Bearer abc.def-ghi"), "abc.def-ghi");
  assert.equal(bearerToken("bearer  abc "), "abc");
  assert.equal(bearerToken("BEARER abc"), "abc");
  for (const other of [null, "", "Bearer", "Bearer ", "Basic YWRtaW46YWRtaW4=", "Bearer a b", "abc"]) {
    assert.equal(bearerToken(other), undefined, `Authorization: ${other}`);
  }
});
