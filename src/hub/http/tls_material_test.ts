// Unit tests for the protected port's TLS material: reading PEM files, the self-signed certificate, and watching the
// files for rotation on virtual time.
import assert from "node:assert/strict";
// @ts-types="@types/node-forge"
import forge from "node-forge";
import { join } from "node:path";
import { VirtualClock } from "../../util/mod.ts";
import { readTlsFiles, selfSignedTls, TlsMaterialError, type TlsPair, watchTlsFiles } from "./tls_material.ts";
import { withTempDir } from "../../../dev/support/local_client.ts";

const CERT = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nKKKK\n-----END PRIVATE KEY-----\n";

/** One self-signed pair for the tests that need one (RSA key generation takes seconds on a loaded machine). */
let shared: Promise<TlsPair> | undefined;
const selfSigned = () => shared ??= selfSignedTls(["hub.example", "localhost"]);

Deno.test("readTlsFiles reads a PEM certificate and key, and names the flag, file and problem otherwise", () =>
  withTempDir(async (dir) => {
    const cert = join(dir, "tls.crt");
    const key = join(dir, "tls.key");
    await Deno.writeTextFile(cert, CERT);
    await Deno.writeTextFile(
      key,
      KEY.replace("PRIVATE KEY", "RSA PRIVATE KEY").replace("PRIVATE KEY", "RSA PRIVATE KEY"),
    );
    assert.equal((await readTlsFiles(cert, key)).cert, CERT);
    await assert.rejects(readTlsFiles(join(dir, "none.crt"), key), (err: Error) => {
      assert.ok(err instanceof TlsMaterialError);
      assert.match(err.message, new RegExp(`^cannot read --tls-cert-file ${join(dir, "none.crt")}: `));
      return true;
    });
    await Deno.writeTextFile(key, "not a key");
    await assert.rejects(readTlsFiles(cert, key), new RegExp(`--tls-private-key-file ${key} holds no PEM private key`));
    await assert.rejects(readTlsFiles(key, key), /--tls-cert-file .* holds no PEM certificate/);
  }));

Deno.test("selfSignedTls makes a serverAuth certificate for localhost, the loopback IPs and the given names, valid for a year", async () => {
  const pair = await selfSigned();
  const cert = forge.pki.certificateFromPem(pair.cert);
  const san = cert.getExtension("subjectAltName") as { altNames: { type: number; value?: string; ip?: string }[] };
  assert.deepEqual(san.altNames.filter((n) => n.type === 2).map((n) => n.value), ["localhost", "hub.example"]);
  assert.deepEqual(san.altNames.filter((n) => n.type === 7).map((n) => n.ip), ["127.0.0.1", "::1"]);
  assert.equal((cert.getExtension("extKeyUsage") as { serverAuth?: boolean }).serverAuth, true);
  const days = (cert.validity.notAfter.getTime() - Date.now()) / 86_400_000;
  assert.ok(days > 364 && days <= 365, `valid for ${days} days`);
  assert.ok(cert.verify(cert), "self-signed");
  const key = forge.pki.privateKeyFromPem(pair.key) as forge.pki.rsa.PrivateKey;
  assert.equal(key.n.bitLength(), 2048);
  assert.equal((cert.publicKey as forge.pki.rsa.PublicKey).n.toString(16), key.n.toString(16), "the key matches");
});

Deno.test("selfSignedTls serves HTTPS on loopback to a client that trusts it", async () => {
  const pair = await selfSigned();
  const port = Promise.withResolvers<number>();
  const ac = new AbortController();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: pair.cert,
      key: pair.key,
      signal: ac.signal,
      onListen: (a) => port.resolve(a.port),
    },
    () => new Response("tls ok"),
  );
  const client = Deno.createHttpClient({ caCerts: [pair.cert] });
  try {
    const res = await fetch(`https://localhost:${await port.promise}/`, { client });
    assert.equal(await res.text(), "tls ok");
  } finally {
    client.close();
    ac.abort();
    await server.finished;
  }
});

/** Waits (real time, polling) until the watch loop is asleep on the virtual clock again; a hang guard of 30 s. */
async function untilSleeping(clock: VirtualClock): Promise<void> {
  for (let i = 0; clock.pending === 0; i++) {
    if (i > 3000) throw new Error("hang guard: the watch loop did not go back to sleep within 30 s");
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("watchTlsFiles reports each change of content once, offers a refused pair again, and keeps the pair on read errors", () =>
  withTempDir(async (dir) => {
    const certFile = join(dir, "tls.crt");
    const keyFile = join(dir, "tls.key");
    const write = async (p: TlsPair) => {
      await Deno.writeTextFile(certFile, p.cert);
      await Deno.writeTextFile(keyFile, p.key);
    };
    const pair = (n: number): TlsPair => ({
      cert: CERT.replace("AAAA", `AAA${n}`),
      key: KEY.replace("KKKK", `KKK${n}`),
    });
    await write(pair(1));
    const clock = new VirtualClock(0);
    const offered: string[] = [];
    const errors: string[] = [];
    let accept = true;
    const ac = new AbortController();
    const done = watchTlsFiles({
      certFile,
      keyFile,
      current: pair(1),
      clock,
      intervalMs: 1000,
      onChange: (p) => {
        offered.push(p.cert.split("\n")[1]);
        return accept;
      },
      onError: (err) => errors.push(err.message),
    }, ac.signal);
    const poll = async () => {
      await untilSleeping(clock);
      await clock.advance(1000);
      await untilSleeping(clock);
    };
    await poll();
    assert.deepEqual(offered, [], "unchanged files are not reported");
    await write(pair(2));
    await poll();
    await poll();
    assert.deepEqual(offered, ["AAA2"], "reported once, then it is the pair in use");
    accept = false;
    await write(pair(3));
    await poll();
    await poll();
    assert.deepEqual(offered, ["AAA2", "AAA3", "AAA3"], "a refused pair is offered again");
    accept = true;
    await Deno.remove(keyFile);
    await poll();
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^cannot read --tls-private-key-file /);
    await write(pair(2)); // the pair still in use: nothing to report
    await poll();
    assert.deepEqual(offered, ["AAA2", "AAA3", "AAA3"]);
    ac.abort();
    await clock.advance(1000);
    await done;
  }));
