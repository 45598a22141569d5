// Unit tests for the TLS fingerprint a client uses to decide when to rebuild its HTTP client.
import assert from "node:assert/strict";
import { type ClusterAuth, tlsFingerprint } from "./cluster_access.ts";

const base: ClusterAuth = {
  headers: { Authorization: "Bearer a" },
  caCerts: ["CA-1"],
  cert: "CERT",
  key: "KEY",
  insecureSkipTlsVerify: false,
};

Deno.test("tlsFingerprint is equal for equal TLS material and ignores headers (a rotated token keeps the client)", () => {
  assert.equal(tlsFingerprint(base), tlsFingerprint(structuredClone(base)));
  assert.equal(tlsFingerprint(base), tlsFingerprint({ ...base, headers: { Authorization: "Bearer b" } }));
  assert.match(tlsFingerprint(base), /^[0-9a-f]{16}$/);
});

Deno.test("tlsFingerprint changes when any certificate, the key or insecure-skip-tls-verify changes", () => {
  const variants: ClusterAuth[] = [
    { ...base, caCerts: ["CA-2"] },
    { ...base, caCerts: ["CA-1", "CA-2"] },
    { ...base, caCerts: undefined },
    { ...base, cert: "CERT2" },
    { ...base, key: "KEY2" },
    { ...base, cert: undefined },
    { ...base, insecureSkipTlsVerify: true },
    // The same characters moved from the CA list to the certificate: separators keep the fields apart.
    { ...base, caCerts: ["CA-1CERT"], cert: "" },
  ];
  const fps = new Set([tlsFingerprint(base), ...variants.map(tlsFingerprint)]);
  assert.equal(fps.size, variants.length + 1);
});

Deno.test("tlsFingerprint does not contain the key", () => {
  const key = "-----BEGIN PRIVATE KEY-----secret-----END PRIVATE KEY-----";
  assert.ok(!tlsFingerprint({ ...base, key }).includes("secret"));
});
