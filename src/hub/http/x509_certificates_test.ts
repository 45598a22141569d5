// Unit tests for the X.509 maker: a self-signed certificate and one signed by another key verify, carry a positive
// serial number, and the serving extensions name DNS names before IP addresses.
import assert from "node:assert/strict";
import { loadForge, makeCertificate, rsaKey, servingExtensions } from "./x509_certificates.ts";

Deno.test("makeCertificate signs itself by default and with a signer's key when given one, under a positive serial", async () => {
  const forge = await loadForge();
  const [ca, leaf] = await Promise.all([rsaKey(forge), rsaKey(forge)]);
  assert.match(ca.pem, /^-----BEGIN PRIVATE KEY-----\n/);
  const caCert = makeCertificate(forge, {
    key: ca.key,
    subject: [{ name: "commonName", value: "test CA" }],
    notBefore: 1_000_000,
    notAfter: 2_000_000_000_000,
    extensions: [{ name: "basicConstraints", cA: true, critical: true }],
  });
  assert.ok(caCert.verify(caCert));
  assert.equal(caCert.issuer.getField("CN").value, "test CA");
  assert.equal(caCert.validity.notBefore.getTime(), 1_000_000);
  const leafCert = makeCertificate(forge, {
    key: leaf.key,
    subject: [{ name: "commonName", value: "leaf" }],
    issuer: caCert.subject.attributes,
    signer: ca.key,
    notBefore: 1_000_000,
    notAfter: 2_000_000_000_000,
    extensions: servingExtensions(["localhost"], ["127.0.0.1"]),
  });
  assert.ok(caCert.verify(leafCert));
  assert.equal(leafCert.issuer.getField("CN").value, "test CA");
  assert.equal(leafCert.subject.getField("CN").value, "leaf");
  for (const c of [caCert, leafCert]) {
    assert.match(c.serialNumber, /^[0-7][0-9a-f]{31}$/);
  }
  assert.notEqual(caCert.serialNumber, leafCert.serialNumber);
});

Deno.test("servingExtensions is a non-CA serverAuth certificate's, DNS names first, each list in its order", () => {
  const ext = servingExtensions(["b.example", "a.example"], ["::1", "10.0.0.1"]);
  assert.deepEqual(ext.map((e) => e.name), ["basicConstraints", "keyUsage", "extKeyUsage", "subjectAltName"]);
  assert.equal(ext[0].cA, false);
  assert.equal(ext[2].serverAuth, true);
  assert.deepEqual(ext[3].altNames, [
    { type: 2, value: "b.example" },
    { type: 2, value: "a.example" },
    { type: 7, ip: "::1" },
    { type: 7, ip: "10.0.0.1" },
  ]);
});
