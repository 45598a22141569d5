// Unit tests for the admission port's certificates: the self-made CA and its renewals on virtual time, and a folder
// of cert-manager files re-read when it changes.
import assert from "node:assert/strict";
// @ts-types="@types/node-forge"
import forge from "node-forge";
import { VirtualClock } from "../../util/mod.ts";
import { CertDirCertificates, SelfMadeCertificates, WebhookCertificateError } from "./webhook_certs.ts";

const START = Date.parse("2026-01-01T00:00:00Z");

function verifies(caPem: string, certPem: string): boolean {
  const ca = forge.pki.certificateFromPem(caPem);
  return ca.verify(forge.pki.certificateFromPem(certPem));
}

Deno.test("SelfMadeCertificates: a CA-signed serving certificate for the names and addresses asked", async () => {
  const clock = new VirtualClock(START);
  const certs = await SelfMadeCertificates.create({
    dnsNames: ["hub.hub-system.svc"],
    ipAddresses: ["10.0.0.7"],
    servingLifetimeMs: 9_000,
    clock,
  });
  const cert = forge.pki.certificateFromPem(certs.current().cert);
  assert.ok(verifies(certs.caBundle(), certs.current().cert));
  const alt = cert.getExtension("subjectAltName") as { altNames: { value?: string; ip?: string }[] };
  const names = alt.altNames.map((a) => a.ip ?? a.value);
  for (const n of ["localhost", "hub.hub-system.svc", "127.0.0.1", "10.0.0.7"]) assert.ok(names.includes(n), n);
  assert.equal(cert.validity.notAfter.getTime(), START + 9_000);
  assert.equal(certs.notAfter, START + 9_000);
  // Deno's TLS stack takes the pair.
  Deno.listenTls({ hostname: "127.0.0.1", port: 0, ...certs.current() }).close();
});

Deno.test("SelfMadeCertificates renews two thirds into the lifetime, keeping the CA bundle", async () => {
  const clock = new VirtualClock(START);
  const certs = await SelfMadeCertificates.create({ servingLifetimeMs: 9_000, clock });
  const bundle = certs.caBundle();
  const first = certs.current().cert;
  let changes = 0;
  certs.onChange(() => changes++);
  const stop = new AbortController();
  const running = certs.start(stop.signal);
  await clock.advance(5_900);
  assert.equal(changes, 0, "not before two thirds of the lifetime");
  // Key generation is real work, not virtual time: advance in steps until the renewal landed.
  for (let i = 0; i < 200 && changes === 0; i++) {
    await clock.advance(i === 0 ? 100 : 0);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(changes, 1);
  assert.notEqual(certs.current().cert, first);
  assert.equal(certs.caBundle(), bundle);
  assert.ok(verifies(bundle, certs.current().cert));
  assert.ok(certs.notAfter - clock.now() > 9_000 - 1_000, "the new certificate starts a full lifetime (whole seconds)");
  stop.abort();
  await running;
});

Deno.test("CertDirCertificates reads tls.crt, tls.key and ca.crt, and takes a change at the next poll", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = await SelfMadeCertificates.create();
    const b = await SelfMadeCertificates.create();
    const write = async (c: SelfMadeCertificates, ca = true) => {
      await Deno.writeTextFile(`${dir}/tls.crt`, c.current().cert);
      await Deno.writeTextFile(`${dir}/tls.key`, c.current().key);
      if (ca) await Deno.writeTextFile(`${dir}/ca.crt`, c.caBundle());
    };
    await write(a);
    const errors: string[] = [];
    const certs = await CertDirCertificates.create({ dir, onError: (e) => errors.push(e.message) });
    assert.equal(certs.current().cert, a.current().cert);
    assert.equal(certs.caBundle(), a.caBundle());
    let changes = 0;
    certs.onChange(() => changes++);
    assert.equal(await certs.poll(), false);
    await write(b);
    assert.equal(await certs.poll(), true);
    assert.equal(changes, 1);
    assert.equal(certs.caBundle(), b.caBundle());
    await Deno.writeTextFile(`${dir}/tls.key`, "not a key");
    assert.equal(await certs.poll(), false);
    assert.equal(await certs.poll(), false);
    assert.equal(errors.length, 1, "one report per distinct problem");
    assert.match(errors[0], /tls.key holds no PEM/);
    assert.equal(certs.current().cert, b.current().cert, "the pair in use stays");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CertDirCertificates.create() names the file it cannot read; without ca.crt the bundle is tls.crt", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      CertDirCertificates.create({ dir }),
      (e: unknown) => e instanceof WebhookCertificateError && e.message.includes(`${dir}/tls.crt`),
    );
    const a = await SelfMadeCertificates.create();
    await Deno.writeTextFile(`${dir}/tls.crt`, a.current().cert);
    await Deno.writeTextFile(`${dir}/tls.key`, a.current().key);
    const certs = await CertDirCertificates.create({ dir });
    assert.equal(certs.caBundle(), a.current().cert);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
